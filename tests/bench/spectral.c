/* Spectral norm: f64 matrix-free power iteration, a call per element. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double a_elem(int i, int j)
{
	return 1.0 / ((i + j) * (i + j + 1) / 2 + i + 1);
}

static void mul_av(int n, const double *v, double *out)
{
	for (int i = 0; i < n; i++) {
		double sum = 0;
		for (int j = 0; j < n; j++)
			sum += a_elem(i, j) * v[j];
		out[i] = sum;
	}
}

static void mul_atv(int n, const double *v, double *out)
{
	for (int i = 0; i < n; i++) {
		double sum = 0;
		for (int j = 0; j < n; j++)
			sum += a_elem(j, i) * v[j];
		out[i] = sum;
	}
}

static void mul_atav(int n, const double *v, double *out, double *tmp)
{
	mul_av(n, v, tmp);
	mul_atv(n, tmp, out);
}

int main(void)
{
	int n = 3000;
	double *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
	double *tmp = malloc(n * sizeof *tmp);
	if (!u || !v || !tmp)
		return 1;
	for (int i = 0; i < n; i++)
		u[i] = 1;
	for (int i = 0; i < 10; i++) {
		mul_atav(n, u, v, tmp);
		mul_atav(n, v, u, tmp);
	}
	double vbv = 0, vv = 0;
	for (int i = 0; i < n; i++) {
		vbv += u[i] * v[i];
		vv += v[i] * v[i];
	}
	printf("%.9f\n", sqrt(vbv / vv));
	free(u);
	free(v);
	free(tmp);
	return 0;
}
