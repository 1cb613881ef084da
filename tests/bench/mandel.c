/* Mandelbrot set in f32: escape-time counts over a grid, summed. */
#include <stdint.h>
#include <stdio.h>

#define WIDTH 1600
#define HEIGHT 1200
#define MAX_ITER 500

static int escape_time(float cr, float ci)
{
	float zr = 0.0f, zi = 0.0f;
	int n = 0;
	while (n < MAX_ITER && zr * zr + zi * zi <= 4.0f) {
		float t = zr * zr - zi * zi + cr;
		zi = 2.0f * zr * zi + ci;
		zr = t;
		n++;
	}
	return n;
}

int main(void)
{
	uint64_t total = 0;
	uint32_t image_hash = 2166136261u;
	for (int y = 0; y < HEIGHT; y++) {
		float ci = -1.2f + 2.4f * (float)y / HEIGHT;
		for (int x = 0; x < WIDTH; x++) {
			float cr = -2.1f + 3.0f * (float)x / WIDTH;
			int n = escape_time(cr, ci);
			total += (uint64_t)n;
			image_hash = (image_hash ^ (uint32_t)n) * 16777619u;
		}
	}
	printf("iterations %llu hash %08x\n", (unsigned long long)total, image_hash);
	return 0;
}
