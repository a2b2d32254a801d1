/* SPDX-License-Identifier: MIT */
/*
 * platform/regs.h — per-core registers of the simulated device.
 *
 * Each core has three register windows of 32-bit atomics, addressed by one
 * 32-bit offset whose high bits select the window:
 *
 *   TP_REG_WIN_DISPATCH  0x0000_0000 + off   the 0x1400-byte block of
 *                        SIM_REG_BLOCK_SIZE (runtime-model.md §1.4):
 *                        DATA_MAIN_BASE at 0xA0 (low 32 bits: dispatch
 *                        token; high 32 bits at 0xA4: early-dispatch
 *                        doorbell), COND at 0x4C8 (ACK / FIN).
 *   TP_REG_WIN_PMU       0x0010_0000 + off   the PMU MMIO block, offsets of
 *                        spec/pmu.md §1.5 (platform's struct tp_pmu_regmap;
 *                        a2a3 0x1400 bytes, a5 0x4400 bytes).
 *   TP_REG_WIN_SPR       0x0020_0000 + off   AICore special registers:
 *                        CTRL at 0x0, bit 0 = PMU counting gate.
 *
 * Everything goes through tp_reg_read() (acquire) and tp_reg_write()
 * (release), so a test can inject a write from another agent at any
 * access (tp_reg_set_foreign_writer()). Writes to DATA_MAIN_BASE ring the
 * core's dispatch doorbell and writes to COND ring its completion doorbell
 * (and the core's completion listener), like the hardware, where writing
 * the register is the signal: a parked reader never misses one.
 *
 * Out-of-range or misaligned accesses are reported, not crashed on: a read
 * returns TP_REG_FAULT_VALUE, a write is dropped, tp_reg_fault_count()
 * counts them and the first few are logged at ERROR.
 *
 * Registers hold what was written; they have no side effects of their own
 * (the PMU model, issue 5, adds counting and read-clear on top).
 */
#ifndef TASKPROF_PLATFORM_REGS_H
#define TASKPROF_PLATFORM_REGS_H

#include <stdbool.h>
#include <stdint.h>

#include "platform/doorbell.h"

struct tp_device;
struct tp_platform;

/* ---- windows ---- */
#define TP_REG_WIN_MASK 0xFFF00000u
#define TP_REG_WIN_DISPATCH 0x00000000u
#define TP_REG_WIN_PMU 0x00100000u
#define TP_REG_WIN_SPR 0x00200000u
/* Offset of PMU register @off (a tp_pmu_regmap field) / SPR @off. */
#define TP_REG_PMU(off) (TP_REG_WIN_PMU | (uint32_t)(off))
#define TP_REG_SPR(off) (TP_REG_WIN_SPR | (uint32_t)(off))

/* ---- dispatch block (SIM_REG_BLOCK_SIZE) ---- */
#define TP_REG_BLOCK_BYTES 0x1400u
#define TP_REG_DATA_MAIN_BASE 0xA0u     /* low 32 bits: dispatch token */
#define TP_REG_DATA_MAIN_BASE_HI 0xA4u  /* high 32 bits: early-dispatch doorbell */
#define TP_REG_COND 0x4C8u              /* [bit31 FIN | low 31 bits token] */

/* ---- AICore special registers ---- */
#define TP_REG_SPR_BYTES 0x100u
#define TP_REG_AICORE_CTRL TP_REG_SPR(0x0)
#define TP_AICORE_CTRL_PMU_GATE 0x1u    /* PMU_AICORE_CTRL_ENABLE_BIT */

/* ---- sentinels (runtime-model.md §7.1 item 2, §2.7–§2.8) ---- */
#define TP_AICPU_IDLE_TASK_ID 0x7FFFFFFDu   /* DATA_MAIN_BASE: window open, no task */
#define TP_AICORE_EXIT_SIGNAL 0x7FFFFFF0u   /* DATA_MAIN_BASE: leave the loop */
#define TP_AICORE_IDLE_TASK_ID 0x7FFFFFFFu
#define TP_AICORE_EXIT_TASK_ID 0x7FFFFFFEu
#define TP_COND_FIN_BIT 0x80000000u
#define TP_COND_TOKEN_MASK 0x7FFFFFFFu
/* COND values: ACK = token, FIN = token | bit31. */
#define TP_COND_ACK(token) ((uint32_t)(token) & TP_COND_TOKEN_MASK)
#define TP_COND_FIN(token) (((uint32_t)(token) & TP_COND_TOKEN_MASK) | TP_COND_FIN_BIT)
/* COND after the start-up handshake (MAKE_FIN_VALUE(AICORE_IDLE_TASK_ID)). */
#define TP_AICORE_IDLE_VALUE TP_COND_FIN(TP_AICORE_IDLE_TASK_ID)    /* 0xFFFFFFFF */
/* COND after the exit signal (MAKE_FIN_VALUE(AICORE_EXIT_TASK_ID)). */
#define TP_AICORE_EXITED_VALUE TP_COND_FIN(TP_AICORE_EXIT_TASK_ID)  /* 0xFFFFFFFE */

/* What a faulting read returns (a bus error reads all ones). */
#define TP_REG_FAULT_VALUE 0xFFFFFFFFu

/**
 * tp_reg_read() - load a core register (acquire).
 * @dev:  the device.
 * @core: core id, 0 .. tp_device_num_cores(dev) - 1.
 * @off:  register offset (window | byte offset), 4-byte aligned.
 *
 * The acquire pairs with the release of the tp_reg_write() that stored
 * the value: what the writer stored before (a dispatch payload, a record)
 * is visible after. The foreign writer, if installed, runs first.
 *
 * Return: the value; TP_REG_FAULT_VALUE for a bad @core or @off (counted,
 * logged, and tp_last_error() set to -ERANGE).
 */
uint32_t tp_reg_read(struct tp_device *dev, int core, uint32_t off);

/**
 * tp_reg_write() - store a core register (release).
 * @dev, @core, @off: as for tp_reg_read().
 * @val:  the value.
 *
 * Writes to DATA_MAIN_BASE / DATA_MAIN_BASE_HI ring the core's dispatch
 * doorbell; writes to COND ring its completion doorbell and listener. The
 * foreign writer, if installed, runs after the store. A bad @core or @off
 * drops the write (counted, logged, tp_last_error() set to -ERANGE).
 */
void tp_reg_write(struct tp_device *dev, int core, uint32_t off, uint32_t val);

/**
 * tp_reg_write_foreign() - store a register as another agent would.
 * @dev, @core, @off, @val: as for tp_reg_write().
 *
 * Same store and doorbells as tp_reg_write(), but never calls the foreign
 * writer hook: this is what a hook (or a test thread playing another
 * agent) uses to clobber a register.
 */
void tp_reg_write_foreign(struct tp_device *dev, int core, uint32_t off, uint32_t val);

/* Kind of access a foreign writer hook is told about. */
enum tp_reg_access {
	TP_REG_ACCESS_READ = 0,
	TP_REG_ACCESS_WRITE = 1,
};

/**
 * typedef tp_reg_foreign_writer_fn - test hook run at every register access.
 * @ud:     the pointer given to tp_reg_set_foreign_writer().
 * @dev:    the device.
 * @core:   core of the access.
 * @off:    register of the access.
 * @access: TP_REG_ACCESS_READ (the hook runs just before the load) or
 *          TP_REG_ACCESS_WRITE (just after the store).
 * @val:    the value written (writes), 0 (reads).
 *
 * The hook plays another agent: it may call tp_reg_write_foreign() on any
 * register, e.g. clobber PMU_CTRL_0 right after the AICPU enabled it. It
 * runs on the accessing thread; register accesses made inside it do not
 * call it again.
 */
typedef void (*tp_reg_foreign_writer_fn)(void *ud, struct tp_device *dev, int core,
					 uint32_t off, enum tp_reg_access access,
					 uint32_t val);

/**
 * tp_reg_set_foreign_writer() - install or remove the foreign writer hook.
 * @dev: the device.
 * @fn:  the hook, or NULL to remove it.
 * @ud:  passed to @fn.
 *
 * For tests. When this returns, the previous hook is not running on any
 * other thread and will not be called again (so its @ud may be freed once
 * the calling hook, if a hook removes itself, has returned).
 */
void tp_reg_set_foreign_writer(struct tp_device *dev, tp_reg_foreign_writer_fn fn,
			       void *ud);

/**
 * tp_reg_wait() - wait until (register & @mask) == @want.
 * @dev, @core, @off: the register.
 * @mask, @want: the condition.
 * @timeout_ns: nanoseconds, or TP_DOORBELL_FOREVER.
 *
 * Parks on the register's doorbell (DATA_MAIN_BASE, COND); other registers
 * are polled with a sleep of 50 µs between reads.
 *
 * Return: 0, or -ETIMEDOUT.
 */
int tp_reg_wait(struct tp_device *dev, int core, uint32_t off, uint32_t mask,
		uint32_t want, uint64_t timeout_ns);

/**
 * tp_reg_doorbell() - the doorbell that writes to a register ring.
 * @dev, @core: the core.
 * @off: TP_REG_DATA_MAIN_BASE / _HI (dispatch doorbell) or TP_REG_COND
 *       (completion doorbell).
 *
 * Return: the doorbell, or NULL for any other register or a bad @core.
 */
struct tp_doorbell *tp_reg_doorbell(struct tp_device *dev, int core, uint32_t off);

/**
 * tp_reg_set_cond_listener() - also ring @db on every COND write of @core.
 * @dev, @core: the core.
 * @db: a doorbell (e.g. the owning scheduler thread's), or NULL to stop.
 *
 * Lets one AICPU thread park until any of its cores ACKs or FINs.
 */
void tp_reg_set_cond_listener(struct tp_device *dev, int core, struct tp_doorbell *db);

/**
 * tp_reg_fault_count() - register accesses refused since the device opened.
 */
uint64_t tp_reg_fault_count(struct tp_device *dev);

/**
 * tp_reg_token_next() - next dispatch token of a core (spec §2.7).
 * @dispatch_seq: the core's sequence, 0 before the first dispatch of a run.
 *
 * token = ++seq & 0x7FFFFFFF, starting at 1. Values >= AICORE_EXIT_SIGNAL
 * (and 0) are skipped by an even amount, so the parity that picks the
 * payload buffer (token & 1) keeps alternating.
 *
 * Return: the token, in 1 .. 0x7FFFFFEF.
 */
static inline uint32_t tp_reg_token_next(uint32_t *dispatch_seq)
{
	uint32_t t = ++*dispatch_seq & TP_COND_TOKEN_MASK;
	while (t >= TP_AICORE_EXIT_SIGNAL || t == 0) {
		*dispatch_seq += 2;
		t = *dispatch_seq & TP_COND_TOKEN_MASK;
	}
	return t;
}

/* ---- the register file object (owned by the device; platform-internal) */

struct tp_regs;

/**
 * tp_regs_create() - a zeroed register file (tp_device_open()).
 * @plat:      the platform: its PMU block size per core.
 * @num_cores: AICores (> 0).
 * @device_id: for messages.
 *
 * Return: the register file, or NULL when out of memory (no
 * tp_last_error() message: the caller sets it).
 */
struct tp_regs *tp_regs_create(const struct tp_platform *plat, int num_cores,
			       int device_id);

/**
 * tp_regs_destroy() - free a register file (NULL is a no-op); no thread
 * may use it any more.
 */
void tp_regs_destroy(struct tp_regs *regs);

/**
 * tp_regs_reset_dispatch() - zero every core's dispatch block
 * (DATA_MAIN_BASE, DATA_MAIN_BASE_HI, COND) before a launch; PMU and SPR
 * windows keep their values, as hardware does across runs. Only while no
 * device thread runs.
 * @regs: the register file.
 */
void tp_regs_reset_dispatch(struct tp_regs *regs);

#endif /* TASKPROF_PLATFORM_REGS_H */
