/*-------------------------------------------------------------------------
 *
 * kernels.c
 *	  Micro benchmark and identity check of the distance kernels.
 *
 * Built and run by "make bench-kernels".  The file includes distance.c
 * itself, so it reaches the static kernels of every path; the backend
 * functions distance.c refers to (ereport, palloc...) are never called and
 * are left unresolved at link time.
 *
 * For each vector length it prints the nanoseconds per call (the fastest
 * of five timings, as the machine may be busy) of the l2, dot and cosine
 * kernels of each path the CPU has, and whether every path returned the
 * same bits as the scalar one on every pair (the bounded l2 kernel
 * included, which must also return l2's bits or a partial sum between its
 * bound and the whole sum).  Argument: rounds (2000).
 *
 * test/bench/kernels.c
 *
 *-------------------------------------------------------------------------
 */
#include "distance.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#undef printf

/* kernels.c is a program, not part of the backend */
extern int	main(int argc, char **argv);

#define NVEC		256			/* vectors scored per round, cache resident */
#define REPEAT		5			/* timings per figure; the fastest is printed */

typedef struct Path
{
	const char *name;
	SegvecKernelFn l2;
	SegvecKernelFn dot;
	CosineKernelFn cosine;
	SegvecBoundedKernelFn bounded;
	bool		present;
} Path;

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* deterministic pseudo-random floats in [-1, 1) */
static float
next_float(uint64 *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float) ((double) (*state >> 40) / (double) (1 << 23) - 1.0);
}

static volatile double sink;

int
main(int argc, char **argv)
{
	static const int dims[] = {3, 16, 32, 100, 128, 784, 1536};
	Path		paths[3];
	int			npaths = 0;
	int			rounds = (argc > 1) ? atoi(argv[1]) : 2000;
	uint64		state = 42;

	paths[npaths++] = (Path) {"scalar", l2_squared_scalar, dot_scalar,
	cosine_parts_scalar, l2_squared_bounded_scalar, true};
#ifdef SEGVEC_HAVE_X86_KERNELS
	__builtin_cpu_init();
	paths[npaths++] = (Path) {"avx2", l2_squared_avx2, dot_avx2,
		cosine_parts_avx2, l2_squared_bounded_avx2,
	__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")};
	paths[npaths++] = (Path) {"avx512", l2_squared_avx512, dot_avx512,
	cosine_parts_avx512, l2_squared_bounded_avx512,
	__builtin_cpu_supports("avx512f")};
#endif

	printf("%6s %-7s %9s %9s %9s  %s\n", "dim", "path", "l2 ns", "dot ns",
		   "cos ns", "bits");
	for (int d = 0; d < (int) lengthof(dims); d++)
	{
		int			dim = dims[d];
		float	   *vecs = malloc(sizeof(float) * dim * (NVEC + 1));
		float	   *q = vecs + dim * NVEC;
		float		ref_l2[NVEC];
		float		ref_dot[NVEC];
		double		ref_cos[NVEC][3];
		float		ref_bounded[NVEC][4];
		int			r = (int) ((double) rounds * 784 / (dim + 16)) + 1;

		for (int i = 0; i < dim * (NVEC + 1); i++)
			vecs[i] = next_float(&state);

		for (int p = 0; p < npaths; p++)
		{
			Path	   *path = &paths[p];
			bool		same = true;
			double		t0,
						t_l2,
						t_dot,
						t_cos;
			double		acc = 0;

			if (!path->present)
				continue;

			/* identity against the scalar path */
			for (int i = 0; i < NVEC; i++)
			{
				float		l2 = path->l2(vecs + i * dim, q, dim);
				float		dot = path->dot(vecs + i * dim, q, dim);
				double		c[3];

				float		bounds[4];
				float		bd[4];

				path->cosine(vecs + i * dim, q, dim, &c[0], &c[1], &c[2]);

				/*
				 * The bounded l2 kernel: with no bound, the bits of l2;
				 * else those bits or a partial sum in [bound, l2]; and the
				 * same on every path.
				 */
				bounds[0] = INFINITY;
				bounds[1] = l2;
				bounds[2] = l2 * 0.5f;
				bounds[3] = 0;
				for (int k = 0; k < 4; k++)
				{
					bd[k] = path->bounded(vecs + i * dim, q, dim, bounds[k]);
					if (memcmp(&bd[k], &l2, sizeof(float)) != 0 &&
						(k == 0 || bd[k] < bounds[k] || bd[k] > l2))
						same = false;
				}
				if (p == 0)
				{
					ref_l2[i] = l2;
					ref_dot[i] = dot;
					memcpy(ref_cos[i], c, sizeof(c));
					memcpy(ref_bounded[i], bd, sizeof(bd));
				}
				else if (memcmp(&l2, &ref_l2[i], sizeof(float)) != 0 ||
						 memcmp(&dot, &ref_dot[i], sizeof(float)) != 0 ||
						 memcmp(c, ref_cos[i], sizeof(c)) != 0 ||
						 memcmp(bd, ref_bounded[i], sizeof(bd)) != 0)
					same = false;
			}

			t_l2 = 1e30;
			for (int rep = 0; rep < REPEAT; rep++)
			{
				t0 = now_ns();
				for (int k = 0; k < r; k++)
					for (int i = 0; i < NVEC; i++)
						acc += path->l2(vecs + i * dim, q, dim);
				t_l2 = Min(t_l2, now_ns() - t0);
			}

			t_dot = 1e30;
			for (int rep = 0; rep < REPEAT; rep++)
			{
				t0 = now_ns();
				for (int k = 0; k < r; k++)
					for (int i = 0; i < NVEC; i++)
						acc += path->dot(vecs + i * dim, q, dim);
				t_dot = Min(t_dot, now_ns() - t0);
			}

			t_cos = 1e30;
			for (int rep = 0; rep < REPEAT; rep++)
			{
				t0 = now_ns();
				for (int k = 0; k < r; k++)
					for (int i = 0; i < NVEC; i++)
					{
						double		c[3];

						path->cosine(vecs + i * dim, q, dim, &c[0], &c[1], &c[2]);
						acc += c[0];
					}
				t_cos = Min(t_cos, now_ns() - t0);
			}
			sink = acc;

			printf("%6d %-7s %9.1f %9.1f %9.1f  %s\n", dim, path->name,
				   t_l2 / ((double) r * NVEC), t_dot / ((double) r * NVEC),
				   t_cos / ((double) r * NVEC),
				   p == 0 ? "reference" : (same ? "identical" : "DIFFER"));
		}
		free(vecs);
	}
	return 0;
}
