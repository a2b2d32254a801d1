/* SPDX-License-Identifier: MIT */
/*
 * op_app_elf.c — what the application's executable says about the device
 * runtime, for the message of a run in which no call reached the
 * injector (docs/op.md "Limits and failure modes").
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "cli/op_launch.h"

bool op_app_defines_runtime(const char *path)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	bool found = false;
	Elf_Scn *scn = NULL;
	while (e && elf_kind(e) == ELF_K_ELF && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		const size_t cnt = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; d && i < cnt && i <= INT32_MAX && !found; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
			found = nm && (!strcmp(nm, "tp_rt_launch") || !strcmp(nm, "tp_rt_launch_ex"));
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}
