// SPDX-License-Identifier: MIT
/*
 * Debug mode (AK_SLAB_DEBUG, chosen per cache at run time): each object
 * sits between red zones, with a state word before it and the free
 * pointer after it:
 *
 *   | left red zone | state | object ... | right red zone | free ptr |
 *                           ^ obj        ^ obj + size     ^ obj + fp_off
 *
 * A free object is poisoned (0x6b, last byte 0xa5) and its red zones read
 * 0xbb; an object in use has red zones 0xcc.  The state word moves
 * FREE -> ALLOC -> FREE by cmpxchg, so two threads freeing one object
 * at once cannot both succeed.  Frees of pointers that are no object of
 * the cache are caught before anything is written.  Under ASan the red
 * zones and free objects are poisoned too; the state and free pointer
 * words stay addressable, as the allocator reads them.
 */
#include "internal.h"

#define POISON_FREE	0x6b
#define POISON_END	0xa5
#define RED_INACTIVE	0xbb
#define RED_ACTIVE	0xcc
#define STATE_FREE	0xf4eef4eef4eef4eeul
#define STATE_ALLOC	0xa110ca7eda110ca7ul

static unsigned long *state_word(void *obj)
{
	return (unsigned long *)((char *)obj - 8);
}

static char *left_rz(const struct ak_kmem_cache *s, void *obj)
{
	return (char *)obj - s->obj_off;
}

static size_t left_len(const struct ak_kmem_cache *s)
{
	return s->obj_off - 8;
}

static char *right_rz(const struct ak_kmem_cache *s, void *obj)
{
	return (char *)obj + s->object_size;
}

static size_t right_len(const struct ak_kmem_cache *s)
{
	return s->fp_off - s->object_size;
}

static void asan_open(const struct ak_kmem_cache *s, void *obj)
{
	slab_asan_unpoison(left_rz(s, obj), left_len(s));
	slab_asan_unpoison(obj, s->fp_off);
}

/* Poison what the user must not touch: red zones, and a free object. */
static void asan_close(const struct ak_kmem_cache *s, void *obj, bool free)
{
	slab_asan_poison(left_rz(s, obj), left_len(s));
	if (free)
		slab_asan_poison(obj, s->fp_off);
	else
		slab_asan_poison(right_rz(s, obj), right_len(s));
}

static void poison_object(const struct ak_kmem_cache *s, void *obj)
{
	memset(obj, POISON_FREE, s->object_size - 1);
	((unsigned char *)obj)[s->object_size - 1] = POISON_END;
}

static void set_red(const struct ak_kmem_cache *s, void *obj, int v)
{
	memset(left_rz(s, obj), v, left_len(s));
	memset(right_rz(s, obj), v, right_len(s));
}

/* Offset of the first byte of p[0..n) that is not v, or -1. */
static long bad_byte(const void *p, size_t n, int v)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != (unsigned char)v)
			return (long)i;
	return -1;
}

static void check_red(struct ak_kmem_cache *s, void *obj, int v,
		      const char *when)
{
	long l = bad_byte(left_rz(s, obj), left_len(s), v);
	long r = bad_byte(right_rz(s, obj), right_len(s), v);

	if (l < 0 && r < 0)
		return;
	slab_stat(s, AK_SLAB_DEBUG_REDZONE, 1);
	if (r >= 0)
		slab_report(s, "%s %p: right red zone overwritten at object + %zu (%#x)",
			    when, obj, s->object_size + (size_t)r,
			    ((unsigned char *)right_rz(s, obj))[r]);
	if (l >= 0)
		slab_report(s, "%s %p: left red zone overwritten at object - %zu (%#x)",
			    when, obj, s->obj_off - (size_t)l,
			    ((unsigned char *)left_rz(s, obj))[l]);
}

void slab_debug_init_object(struct ak_kmem_cache *s, void *obj)
{
	*state_word(obj) = STATE_FREE;
	poison_object(s, obj);
	set_red(s, obj, RED_INACTIVE);
	asan_close(s, obj, true);
}

void slab_debug_alloc(struct ak_kmem_cache *s, void *obj)
{
	unsigned long st;
	long b;

	asan_open(s, obj);
	st = ak_cmpxchg(state_word(obj), STATE_FREE, STATE_ALLOC);
	if (st != STATE_FREE)
		slab_report(s, "alloc %p: object handed out but not free (state %#lx)",
			    obj, st);
	b = bad_byte(obj, s->object_size - 1, POISON_FREE);
	if (b < 0 && ((unsigned char *)obj)[s->object_size - 1] != POISON_END)
		b = (long)s->object_size - 1;
	if (b >= 0) {
		slab_stat(s, AK_SLAB_DEBUG_POISON, 1);
		slab_report(s, "alloc %p: free object written to at offset %ld (%#x)",
			    obj, b, ((unsigned char *)obj)[b]);
	}
	check_red(s, obj, RED_INACTIVE, "alloc");
	set_red(s, obj, RED_ACTIVE);
	asan_close(s, obj, false);
}

bool slab_debug_free(struct ak_kmem_cache *s, void *obj)
{
	struct ak_slab *sl = slab_registry_find(s, obj);
	struct ak_slab *other = sl ? NULL : slab_registry_find(NULL, obj);
	unsigned long st;
	ptrdiff_t off;

	if (!sl) {
		slab_stat(s, AK_SLAB_DEBUG_BAD_FREE, 1);
		if (other && other->magic == SLAB_MAGIC)
			slab_report(s, "free %p: object of cache %s, not of this one",
				    obj, other->cache->name);
		else
			slab_report(s, "free %p: not an object of this cache", obj);
		return false;
	}
	off = (char *)obj - sl->first - s->obj_off;
	if (off < 0 || off % s->stride ||
	    (size_t)off / s->stride >= sl->objects) {
		slab_stat(s, AK_SLAB_DEBUG_BAD_FREE, 1);
		slab_report(s, "free %p: inside slab %p but not an object start",
			    obj, (void *)sl);
		return false;
	}
	st = ak_cmpxchg(state_word(obj), STATE_ALLOC, STATE_FREE);
	if (st == STATE_FREE) {
		slab_stat(s, AK_SLAB_DEBUG_DOUBLE_FREE, 1);
		slab_report(s, "free %p: double free", obj);
		return false;
	}
	if (st != STATE_ALLOC) {
		slab_stat(s, AK_SLAB_DEBUG_BAD_FREE, 1);
		slab_report(s, "free %p: state word overwritten (%#lx)", obj, st);
		return false;
	}
	asan_open(s, obj);
	check_red(s, obj, RED_ACTIVE, "free");
	poison_object(s, obj);
	set_red(s, obj, RED_INACTIVE);
	asan_close(s, obj, true);
	return true;
}
