// SPDX-License-Identifier: MIT
/*
 * Lock-based 128-bit compare-and-exchange, for where no native instruction
 * exists.  Addresses hash onto a small table of spinlocks, each on its own
 * cache line.  Every signal is blocked while a lock is held: a handler on
 * the same thread that reached the same lock would otherwise spin forever,
 * and blocking makes the emulation serve the _local forms too.
 *
 * fork() takes every lock first and releases them on both sides: a child
 * forked while another thread held one would inherit it held, and its
 * first cmpxchg128 on that slot would spin forever with every signal
 * blocked, past any alarm().  These locks are the innermost: a thread
 * may hold another lock of ours (a slab's list lock) around a
 * cmpxchg128, never the other way.  So their prepare handler must run
 * after every other, and fork runs prepare handlers in the reverse order
 * of their registration: it is registered before any other of ours.
 */
#include <pthread.h>
#include <signal.h>
#include <atomkit/cmpxchg.h>

#define LOCKEMU_SLOTS 64

static struct {
	int lock;
} __attribute__((aligned(64))) lockemu_table[LOCKEMU_SLOTS];

static int *lock_for(const void *p)
{
	uintptr_t a = (uintptr_t)p >> 4;

	return &lockemu_table[(a ^ (a >> 6) ^ (a >> 12)) % LOCKEMU_SLOTS].lock;
}

static void lock_slot(int *lock)
{
	while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(lock, __ATOMIC_RELAXED))
			;
}

/* the forking thread's mask, for while it holds every lock */
static __thread sigset_t fork_saved;

static void fork_prepare(void)
{
	sigset_t all;
	unsigned int i;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &fork_saved);
	for (i = 0; i < LOCKEMU_SLOTS; i++)
		lock_slot(&lockemu_table[i].lock);
}

static void fork_release(void)
{
	unsigned int i;

	for (i = LOCKEMU_SLOTS; i-- > 0;)
		__atomic_store_n(&lockemu_table[i].lock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &fork_saved, NULL);
}

void __ak_lockemu_atfork(void)
{
	static int done;

	if (!__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		pthread_atfork(fork_prepare, fork_release, fork_release);
}

__attribute__((constructor)) static void lockemu_init(void)
{
	__ak_lockemu_atfork();
}

ak_u128 ak_cmpxchg128_lockemu(ak_u128 *p, ak_u128 old, ak_u128 new_)
{
	sigset_t all, saved;
	int *lock = lock_for(p);
	ak_u128 cur;

	AK_BUG_ON(!AK_IS_ALIGNED16(p));
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	lock_slot(lock);
	/* Full ordering, as the native forms give on success. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	cur = *(volatile ak_u128 *)p;
	if (cur == old)
		*(volatile ak_u128 *)p = new_;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return cur;
}
