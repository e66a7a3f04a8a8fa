/*
 * test_respcache.c: the response cache (daemon/respcache.c) on its own: hits return the bytes kept, keys are
 * (route, exact body), a new store generation drops everything, the byte bound holds with least-recently-used
 * eviction, oversize answers are not kept, and concurrent use keeps the counters consistent.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../daemon/respcache.h"

#define PLAN "{\"model\":\"llama-3-8b\",\"batch_size\":1}"

static void put_s(mpd_respcache *c, unsigned route, const char *body, uint64_t gen, const char *value)
{
	mpd_respcache_put(c, route, body, strlen(body), gen, value, strlen(value));
}

/* The kept answer for (route, body) at gen as a string the caller frees, or NULL. */
static char *get_s(mpd_respcache *c, unsigned route, const char *body, uint64_t gen)
{
	return mpd_respcache_get(c, route, body, strlen(body), gen, NULL);
}

static void test_hit_returns_the_kept_bytes(void **state)
{
	mpd_respcache *c = mpd_respcache_new(1 << 20);
	mpd_respcache_stats s;
	size_t n = 0;
	char *v;

	(void)state;
	assert_non_null(c);
	assert_null(get_s(c, 6, PLAN, 1));
	put_s(c, 6, PLAN, 1, "{\"total_bytes\":17638465536}");
	v = mpd_respcache_get(c, 6, PLAN, strlen(PLAN), 1, &n);
	assert_non_null(v);
	assert_string_equal(v, "{\"total_bytes\":17638465536}");
	assert_int_equal(n, strlen(v));
	free(v);
	/* the key is the exact body and the route: one byte more, or another route, is another question */
	assert_null(get_s(c, 6, PLAN " ", 1));
	assert_null(get_s(c, 7, PLAN, 1));
	/* the body need not be NUL-terminated: only len bytes count */
	v = mpd_respcache_get(c, 6, PLAN "garbage", strlen(PLAN), 1, NULL);
	assert_non_null(v);
	free(v);
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.hits, 2);
	assert_int_equal(s.misses, 3);
	assert_int_equal(s.entries, 1);
	/* charged: the entry's struct, the 4-byte route, the body, the value and its NUL, and 64 of table share */
	assert_true(s.bytes >= sizeof(unsigned) + strlen(PLAN) + strlen("{\"total_bytes\":17638465536}") + 1 + 64);
	assert_true(s.bytes <= s.max_bytes);
	mpd_respcache_free(c);
}

static void test_generation_drops_everything(void **state)
{
	mpd_respcache *c = mpd_respcache_new(1 << 20);
	mpd_respcache_stats s;
	char *v;

	(void)state;
	put_s(c, 6, "{\"a\":1}", 41, "one");
	put_s(c, 6, "{\"a\":2}", 41, "two");
	put_s(c, 16, "{\"a\":1}", 41, "fit");
	v = get_s(c, 16, "{\"a\":1}", 41);
	assert_string_equal(v, "fit");
	free(v);
	/* the store moved (a write, or another process's commit): nothing kept is served */
	assert_null(get_s(c, 6, "{\"a\":1}", 42));
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.invalidations, 3);
	assert_int_equal(s.entries, 0);
	assert_int_equal(s.bytes, 0);
	/* sync: the same generation keeps everything, a new one drops it without a lookup */
	put_s(c, 6, "{\"a\":3}", 42, "three");
	mpd_respcache_sync(c, 42);
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.entries, 1);
	mpd_respcache_sync(c, 43);
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.entries, 0);
	assert_int_equal(s.bytes, 0);
	assert_int_equal(s.invalidations, 4);
	mpd_respcache_sync(NULL, 1);
	/* an answer computed at an older generation than the cache has seen is dropped with the rest on return */
	put_s(c, 6, "{\"a\":1}", 42, "one at 42");
	v = get_s(c, 6, "{\"a\":1}", 42);
	assert_string_equal(v, "one at 42");
	free(v);
	mpd_respcache_free(c);
}

static void test_lru_within_the_bound(void **state)
{
	const char *value = "12345678";
	mpd_respcache *c;
	mpd_respcache_stats s;
	size_t one;
	char body[32], *v;

	(void)state;
	/* learn what one entry is charged (bodies {"n":0}..{"n":9} all cost the same), then bound to 4.5 of them */
	c = mpd_respcache_new(1 << 20);
	put_s(c, 1, "{\"n\":0}", 1, value);
	mpd_respcache_stats_get(c, &s);
	one = s.bytes;
	mpd_respcache_free(c);
	c = mpd_respcache_new(one * 4 + one / 2);
	for (int i = 0; i < 5; i++) {
		snprintf(body, sizeof(body), "{\"n\":%d}", i);
		put_s(c, 1, body, 1, value);
		if (i == 3) { /* touch n=0, so that n=1 is the least recently used when room runs out */
			v = get_s(c, 1, "{\"n\":0}", 1);
			assert_non_null(v);
			free(v);
		}
	}
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.entries, 4);
	assert_int_equal(s.evictions, 1);
	assert_int_equal(s.bytes, 4 * one);
	assert_null(get_s(c, 1, "{\"n\":1}", 1)); /* evicted */
	v = get_s(c, 1, "{\"n\":0}", 1);	   /* kept: used recently */
	assert_non_null(v);
	free(v);
	v = get_s(c, 1, "{\"n\":4}", 1);	   /* the newest */
	assert_string_equal(v, value);
	free(v);
	/* an entry charged over a quarter of the bound is not kept: at least four always fit */
	mpd_respcache_free(c);
	c = mpd_respcache_new(one * 4 - 4);
	put_s(c, 1, "{\"n\":0}", 1, value);
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.entries, 0);
	mpd_respcache_free(c);
}

static void test_oversize_and_replace(void **state)
{
	mpd_respcache *c = mpd_respcache_new(8000);
	mpd_respcache_stats s;
	char big[1002];
	char *v;

	(void)state;
	memset(big, 'b', 1001);
	big[1001] = '\0';
	put_s(c, 2, "{}", 5, big); /* 1001 > 8000 / 8 */
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.entries, 0);
	big[1000] = '\0';
	put_s(c, 2, "{}", 5, big); /* 1000 <= 8000 / 8 */
	put_s(c, 2, "{}", 5, "newer");
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.entries, 1);
	v = get_s(c, 2, "{}", 5);
	assert_string_equal(v, "newer");
	free(v);
	/* NULL cache: every call is a no-op */
	assert_null(mpd_respcache_new(0));
	assert_null(get_s(NULL, 2, "{}", 5));
	put_s(NULL, 2, "{}", 5, "x");
	mpd_respcache_stats_get(NULL, &s);
	assert_int_equal(s.entries, 0);
	mpd_respcache_free(NULL);
	mpd_respcache_free(c);
}

typedef struct worker {
	mpd_respcache *c;
	unsigned seed;
	unsigned long wrong;
	unsigned long lookups;
} worker;

/* Looks up and keeps 64 keys whose value is derived from the key, so any answer can be checked. */
static void *work(void *arg)
{
	worker *w = arg;
	char body[32], want[48];

	for (int i = 0; i < 20000; i++) {
		unsigned k = (w->seed = w->seed * 1103515245u + 12345u) >> 16 & 63;
		uint64_t gen = (uint64_t)(i / 5000); /* four generations */
		char *v;

		snprintf(body, sizeof(body), "{\"k\":%u}", k);
		snprintf(want, sizeof(want), "answer %u at %llu", k, (unsigned long long)gen);
		v = mpd_respcache_get(w->c, 3, body, strlen(body), gen, NULL);
		w->lookups++;
		if (v == NULL)
			mpd_respcache_put(w->c, 3, body, strlen(body), gen, want, strlen(want));
		else if (strcmp(v, want) != 0) /* only an answer made at the generation asked for is served */
			w->wrong++;
		free(v);
	}
	return NULL;
}

static void test_threads(void **state)
{
	mpd_respcache *c = mpd_respcache_new(4096);
	mpd_respcache_stats s;
	pthread_t t[4];
	worker w[4];
	unsigned long lookups = 0;

	(void)state;
	for (int i = 0; i < 4; i++) {
		w[i] = (worker){ c, (unsigned)i * 7919u + 1u, 0, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].wrong, 0);
		lookups += w[i].lookups;
	}
	mpd_respcache_stats_get(c, &s);
	assert_int_equal(s.hits + s.misses, lookups);
	assert_true(s.hits > 0);
	assert_true(s.evictions > 0); /* 64 keys do not fit in 4 KB */
	assert_true(s.bytes <= s.max_bytes);
	mpd_respcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_returns_the_kept_bytes),
		cmocka_unit_test(test_generation_drops_everything),
		cmocka_unit_test(test_lru_within_the_bound),
		cmocka_unit_test(test_oversize_and_replace),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
