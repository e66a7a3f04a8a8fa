/*
 * invariants_ndebug.c: core/mp_assert.h as a release build compiles it (NDEBUG defined before the header), for
 * test_invariants: a broken invariant evaluates to its condition and the caller's branch for it runs; nothing aborts.
 */
#define NDEBUG 1
#include "../core/mp_assert.h"

int mp_test_release_never(int v, int *evaluated);
int mp_test_release_always(int v, int *evaluated);

/* MP_NEVER(v == 1), counting how often the condition was evaluated */
int mp_test_release_never(int v, int *evaluated)
{
	return MP_NEVER(++*evaluated && v == 1);
}

int mp_test_release_always(int v, int *evaluated)
{
	return MP_ALWAYS(++*evaluated && v == 1);
}
