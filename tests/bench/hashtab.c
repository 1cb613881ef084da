/* Integer hashing: a 64-bit mixer over a buffer and an open-addressing
 * hash table counting keys from a pseudo-random stream. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TABLE_BITS 20
#define TABLE_SIZE (1u << TABLE_BITS)
#define KEY_RANGE 600000u

struct slot {
	uint32_t key; /* 0 marks an empty slot; keys start at 1 */
	uint32_t count;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t xorshift64(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

static void table_add(struct slot *table, uint32_t key)
{
	uint32_t i = mix32(key) & (TABLE_SIZE - 1);
	while (table[i].key != 0 && table[i].key != key)
		i = (i + 1) & (TABLE_SIZE - 1);
	table[i].key = key;
	table[i].count++;
}

static uint32_t table_get(const struct slot *table, uint32_t key)
{
	uint32_t i = mix32(key) & (TABLE_SIZE - 1);
	while (table[i].key != 0) {
		if (table[i].key == key)
			return table[i].count;
		i = (i + 1) & (TABLE_SIZE - 1);
	}
	return 0;
}

/* A word-at-a-time hash in the style of xxhash's 64-bit round. */
static uint64_t hash_buffer(const uint64_t *words, size_t n, uint64_t seed)
{
	const uint64_t p1 = 0x9e3779b185ebca87ull, p2 = 0xc2b2ae3d27d4eb4full;
	uint64_t acc = seed + p1;
	for (size_t i = 0; i < n; i++) {
		acc += words[i] * p2;
		acc = (acc << 31) | (acc >> 33);
		acc *= p1;
	}
	acc ^= acc >> 33;
	acc *= p2;
	acc ^= acc >> 29;
	return acc;
}

int main(void)
{
	struct slot *table = calloc(TABLE_SIZE, sizeof *table);
	size_t nwords = 1u << 16;
	uint64_t *words = malloc(nwords * sizeof *words);
	if (!table || !words)
		return 1;
	for (int i = 0; i < 12000000; i++)
		table_add(table, (uint32_t)(xorshift64() % KEY_RANGE) + 1);
	uint64_t found = 0;
	for (uint32_t k = 1; k <= KEY_RANGE * 4; k++)
		found += table_get(table, (k * 2654435761u) % (KEY_RANGE * 2) + 1);
	for (size_t i = 0; i < nwords; i++)
		words[i] = xorshift64();
	uint64_t digest = 0;
	for (int round = 0; round < 400; round++)
		digest ^= hash_buffer(words, nwords, digest + (uint64_t)round);
	printf("found %llu digest %016llx\n", (unsigned long long)found,
	       (unsigned long long)digest);
	free(table);
	free(words);
	return 0;
}
