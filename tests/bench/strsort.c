/* String processing: build words, tokenise a text, qsort the tokens with
 * strcmp, count distinct ones, and reverse/uppercase them. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NWORDS 400000

static uint32_t rng_state = 12345;

static uint32_t next_random(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A text of NWORDS words of 1..10 letters, separated by spaces and
 * punctuation, as one string. */
static char *make_text(void)
{
	static const char syllables[][4] = {"ka", "lo", "mi", "nu", "pre", "sa", "ti", "or", "en", "qu"};
	char *text = malloc((size_t)NWORDS * 16);
	size_t len = 0;
	if (!text)
		return NULL;
	for (int w = 0; w < NWORDS; w++) {
		int parts = 1 + (int)(next_random() % 3);
		for (int p = 0; p < parts; p++) {
			const char *s = syllables[next_random() % 10];
			size_t n = strlen(s);
			memcpy(text + len, s, n);
			len += n;
		}
		text[len++] = (next_random() % 8 == 0) ? ',' : ' ';
	}
	text[len] = '\0';
	return text;
}

static uint32_t process_tokens(char **tokens, int count)
{
	uint32_t hash = 2166136261u;
	char buffer[64];
	for (int i = 0; i < count; i++) {
		size_t n = strlen(tokens[i]);
		for (size_t j = 0; j < n; j++)
			buffer[j] = (char)toupper((unsigned char)tokens[i][n - 1 - j]);
		buffer[n] = '\0';
		for (const char *c = buffer; *c; c++)
			hash = (hash ^ (uint8_t)*c) * 16777619u;
	}
	return hash;
}

int main(void)
{
	uint32_t total_hash = 0;
	long distinct_total = 0;
	for (int round = 0; round < 4; round++) {
		char *text = make_text();
		char **tokens = malloc(NWORDS * sizeof *tokens);
		if (!text || !tokens)
			return 1;
		int count = 0;
		for (char *tok = strtok(text, " ,"); tok; tok = strtok(NULL, " ,"))
			tokens[count++] = strdup(tok);
		qsort(tokens, (size_t)count, sizeof *tokens, compare_strings);
		int distinct = count > 0;
		for (int i = 1; i < count; i++)
			distinct += strcmp(tokens[i - 1], tokens[i]) != 0;
		distinct_total += distinct;
		total_hash ^= process_tokens(tokens, count);
		for (int i = 0; i < count; i++)
			free(tokens[i]);
		free(tokens);
		free(text);
	}
	printf("distinct %ld hash %08x\n", distinct_total, total_hash);
	return 0;
}
