/* spsc.c — allocation of the SPSC ring (the ring itself is inline). */
#include <errno.h>
#include <stdlib.h>

#include "transport/spsc.h"

int tp_spsc_init(struct tp_spsc *r, size_t capacity, size_t item_size)
{
	if (capacity == 0 || item_size == 0)
		return -EINVAL;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	r->capacity = capacity;
	r->item_size = item_size;
	r->items = calloc(capacity, item_size);
	return r->items ? 0 : -ENOMEM;
}

void tp_spsc_fini(struct tp_spsc *r)
{
	free(r->items);
	r->items = NULL;
	r->capacity = 0;
}
