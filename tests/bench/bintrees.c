/* Binary trees: allocation-heavy building and walking of many small
 * trees with malloc/free. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *left, *right;
};

static struct node *build(int depth)
{
	struct node *n = malloc(sizeof *n);
	if (!n)
		abort();
	if (depth > 0) {
		n->left = build(depth - 1);
		n->right = build(depth - 1);
	} else {
		n->left = n->right = NULL;
	}
	return n;
}

static long check(const struct node *n)
{
	if (!n->left)
		return 1;
	return 1 + check(n->left) + check(n->right);
}

static void release(struct node *n)
{
	if (n->left) {
		release(n->left);
		release(n->right);
	}
	free(n);
}

int main(void)
{
	int max_depth = 17, min_depth = 4;
	struct node *stretch = build(max_depth + 1);
	printf("stretch tree of depth %d\t check: %ld\n", max_depth + 1, check(stretch));
	release(stretch);
	struct node *long_lived = build(max_depth);
	for (int depth = min_depth; depth <= max_depth; depth += 2) {
		int iterations = 1 << (max_depth - depth + min_depth);
		long sum = 0;
		for (int i = 0; i < iterations; i++) {
			struct node *t = build(depth);
			sum += check(t);
			release(t);
		}
		printf("%d\t trees of depth %d\t check: %ld\n", iterations, depth, sum);
	}
	printf("long lived tree of depth %d\t check: %ld\n", max_depth, check(long_lived));
	release(long_lived);
	return 0;
}
