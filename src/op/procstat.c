/* SPDX-License-Identifier: MIT */
/* op/procstat.c — see procstat.h. */
#include "op/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *tp_proc_stat_field(const char *text, int field)
{
	if (!text || field < TP_PROC_STAT_STATE)
		return NULL;
	const char *p = strrchr(text, ')');
	if (!p || p[1] != ' ')
		return NULL;
	p += 2; /* field 3 starts here */
	for (int f = TP_PROC_STAT_STATE; f < field; f++) {
		p = strchr(p, ' ');
		if (!p)
			return NULL;
		p++;
	}
	return *p && *p != ' ' && *p != '\n' ? p : NULL;
}

int tp_proc_stat_u64(const char *text, int field, uint64_t *out)
{
	const char *p = tp_proc_stat_field(text, field);
	if (!p || *p < '0' || *p > '9')
		return -1;
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10u + (uint64_t)(*p - '0');
	*out = v;
	return 0;
}

int tp_proc_stat_read(pid_t pid, char *buf, size_t n)
{
	char path[64];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	const int e = errno;
	close(fd);
	if (r <= 0) {
		errno = r < 0 ? e : EIO;
		return -1;
	}
	buf[r] = '\0';
	return 0;
}
