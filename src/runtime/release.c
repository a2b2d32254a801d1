/* SPDX-License-Identifier: MIT */
#include "runtime/release.h"

uint32_t tp_release_defer(struct tp_release_list *l, struct tp_slot *slot,
			  tp_slot_fn on_consumed, void *ud)
{
	uint32_t flushed = 0;
	if (l->n == TP_DEFERRED_RELEASE_CAP)
		flushed = tp_release_flush(l, on_consumed, ud);
	l->slots[l->n++] = slot;
	return flushed;
}

uint32_t tp_release_flush(struct tp_release_list *l, tp_slot_fn on_consumed, void *ud)
{
	uint32_t n = l->n;
	for (uint32_t i = 0; i < n; i++)
		tp_slot_release(l->slots[i], on_consumed, ud);
	l->n = 0;
	return n;
}
