/* Matrix code in f64: blocked-order matrix multiply and LU decomposition
 * with partial pivoting, then the determinant and a residual check. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 700

static uint32_t rng_state = 2463534242u;

static double next_value(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return (double)(rng_state % 20001) / 10000.0 - 1.0;
}

static void matmul(int n, const double *a, const double *b, double *c)
{
	for (int i = 0; i < n * n; i++)
		c[i] = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n; k++) {
			double aik = a[i * n + k];
			for (int j = 0; j < n; j++)
				c[i * n + j] += aik * b[k * n + j];
		}
}

/* In-place LU with row pivoting; returns the log|det| and sign in *sign. */
static double lu_decompose(int n, double *a, int *perm, int *sign)
{
	double log_det = 0;
	*sign = 1;
	for (int i = 0; i < n; i++)
		perm[i] = i;
	for (int k = 0; k < n; k++) {
		int pivot = k;
		for (int i = k + 1; i < n; i++)
			if (fabs(a[i * n + k]) > fabs(a[pivot * n + k]))
				pivot = i;
		if (pivot != k) {
			for (int j = 0; j < n; j++) {
				double t = a[k * n + j];
				a[k * n + j] = a[pivot * n + j];
				a[pivot * n + j] = t;
			}
			int t = perm[k];
			perm[k] = perm[pivot];
			perm[pivot] = t;
			*sign = -*sign;
		}
		double diag = a[k * n + k];
		if (diag < 0)
			*sign = -*sign;
		log_det += log(fabs(diag));
		for (int i = k + 1; i < n; i++) {
			double factor = a[i * n + k] / diag;
			a[i * n + k] = factor;
			for (int j = k + 1; j < n; j++)
				a[i * n + j] -= factor * a[k * n + j];
		}
	}
	return log_det;
}

int main(void)
{
	double *a = malloc(N * N * sizeof *a), *b = malloc(N * N * sizeof *b);
	double *c = malloc(N * N * sizeof *c);
	int *perm = malloc(N * sizeof *perm);
	if (!a || !b || !c || !perm)
		return 1;
	for (int i = 0; i < N * N; i++) {
		a[i] = next_value();
		b[i] = next_value();
	}
	double trace_sum = 0;
	for (int round = 0; round < 3; round++) {
		matmul(N, a, b, c);
		for (int i = 0; i < N; i++)
			trace_sum += c[i * N + i];
		matmul(N, c, a, b);
		for (int i = 0; i < N * N; i++)
			b[i] = b[i] / (1.0 + fabs(b[i]));
	}
	int sign;
	double log_det = lu_decompose(N, c, perm, &sign);
	double lsum = 0;
	for (int i = 0; i < N * N; i++)
		lsum += c[i];
	printf("trace %.6e logdet %.6f sign %d lsum %.6e perm %d\n", trace_sum, log_det, sign,
	       lsum, perm[N / 2]);
	free(a);
	free(b);
	free(c);
	free(perm);
	return 0;
}
