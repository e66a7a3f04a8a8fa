/*
 * mp_assert.h: invariants, in SQLite's ALWAYS/NEVER habit (sqliteInt.h). An invariant is a state no input can
 * reach: a table without a row for an enum value, a limit a caller already checked, an index a loop keeps in
 * range. Bad input is never asserted: it is an error with a message (mp_fail), a 4xx at the API.
 *
 *     if (MP_NEVER(k >= MP_COUNT_OF(rows)))    the branch a correct program never takes, written for release
 *         return mp_fail(err, MP_EINTERNAL, ...);
 *     if (MP_ALWAYS(n <= MP_MAX_LAYERS)) ...    the condition a correct program always meets
 *
 * In debug and test builds (NDEBUG not defined: `make`, `make check`, `make asan` all are) a broken invariant
 * aborts through assert(), which prints the macro and the expression (!"MP_NEVER(" "k >= ..." ")"), the file, line
 * and function. In a release build (CFLAGS=-DNDEBUG) each macro evaluates to its condition, once, so the program
 * takes the branch written for the broken case instead of going on with a bad index. Facts the compiler can check (a table's length against the enum it is
 * indexed by) are MP_STATIC_ASSERT instead: they fail the build, not a run. Header only; nothing here has state.
 */
#ifndef MP_ASSERT_H
#define MP_ASSERT_H

#include <assert.h>

#ifndef NDEBUG
#define MP_ALWAYS(X) ((X) ? 1 : (assert(!"MP_ALWAYS(" #X ")"), 0))
#define MP_NEVER(X) ((X) ? (assert(!"MP_NEVER(" #X ")"), 1) : 0)
#else
#define MP_ALWAYS(X) ((X) ? 1 : 0)
#define MP_NEVER(X) ((X) ? 1 : 0)
#endif

/* A compile-time invariant (C11 _Static_assert), usable at file scope and in a block. */
#define MP_STATIC_ASSERT(cond, why) _Static_assert(cond, why)

/* The number of elements of an array (not a pointer): the length a name table's static assert compares with its
 * enum's *_COUNT. */
#define MP_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#endif
