/*-------------------------------------------------------------------------
 *
 * distance_simd.h
 *	  The SIMD distance kernels, written once for every instruction set.
 *
 * Not an ordinary header: distance.c includes it once per instruction set
 * (AVX2, AVX-512F), each time after defining the primitives below, and it
 * defines that set's four kernels, named with the set's suffix:
 *
 *	l2_squared_ISA, l2_squared_bounded_ISA, dot_ISA	(float, FLOAT_LANES
 *		partial sums held in SIMD_FREGS registers of SIMD_FWIDTH floats)
 *	cosine_parts_ISA	(double, DOUBLE_LANES partial sums held in
 *		SIMD_DREGS registers)
 *
 * They follow the summation order of distance.c's header: register r holds
 * lanes r * SIMD_FWIDTH .. (r + 1) * SIMD_FWIDTH - 1, each lane adds its
 * elements in order (a multiply, then an add; a fused multiply-add only in
 * the double kernel, where it rounds the same), and the tail block is read
 * through masks that load zeros past the end.
 *
 * What the includer defines (this file undefines it all at its end, as
 * PostgreSQL's simplehash.h does):
 *
 *	SIMD_ISA			the suffix of the names (avx2, avx512)
 *	SIMD_TARGET			the target attribute of every function
 *	simd_f, simd_d		the float and the double register types
 *	SIMD_FREGS, SIMD_FWIDTH		float registers per block, floats each
 *	SIMD_DREGS			double registers per block of DOUBLE_LANES floats
 *	SIMD_FZERO(), SIMD_FLOAD(p), SIMD_FADD(x, y), SIMD_FSUB(x, y),
 *	SIMD_FMUL(x, y)		float register operations
 *	simd_fmask, SIMD_FTAIL_MASK(n, r)	the mask of the lanes of register r
 *						that exist in a block of which only the first n
 *						(1 .. FLOAT_LANES - 1) floats exist
 *	SIMD_FLOAD_MASKED(p, m)	a register loaded through mask m: zeros in
 *						the lanes past it, whose memory is not touched
 *	SIMD_FREDUCE(s)		the fixed tree over the FLOAT_LANES lanes of the
 *						registers s[0 .. SIMD_FREGS - 1]: a float
 *	SIMD_DZERO(), SIMD_DFMADD(x, y, acc)	double register operations
 *	SIMD_DWIDEN(p, q)	the DOUBLE_LANES floats at p, widened into the
 *						registers q[0 .. SIMD_DREGS - 1]
 *	SIMD_DWIDEN_TAIL(p, n, q)	the same for the first n (1 ..
 *						DOUBLE_LANES - 1) floats, zeros past them
 *	SIMD_DREDUCE(q)		the fixed tree over the DOUBLE_LANES lanes of q
 *
 * The register arrays are indexed only by constants once the loops over
 * them are unrolled, so the compiler keeps them in registers.
 *
 * src/kernels/distance_simd.h
 *
 *-------------------------------------------------------------------------
 */

#define SIMD_NAME_(base, isa)	base##_##isa
#define SIMD_NAME2_(base, isa)	SIMD_NAME_(base, isa)
#define SIMD_NAME(base)			SIMD_NAME2_(base, SIMD_ISA)

/*
 * One block of the float kernels: s[r] += (a - b)^2 (l2) or a * b (dot),
 * register by register.  With tail, a last block of only n elements.
 */
SIMD_TARGET
static pg_attribute_always_inline void
SIMD_NAME(float_block) (simd_f *s, const float *a, const float *b,
						bool tail, int n, bool l2)
{
	simd_f		x[SIMD_FREGS];
	simd_f		y[SIMD_FREGS];
	simd_fmask	m;
	int			r;

	/* all the loads (and l2's differences) first, then the sums */
	UNROLL_LANES
	for (r = 0; r < SIMD_FREGS; r++)
	{
		if (tail)
		{
			m = SIMD_FTAIL_MASK(n, r);
			x[r] = SIMD_FLOAD_MASKED(a + r * SIMD_FWIDTH, m);
			y[r] = SIMD_FLOAD_MASKED(b + r * SIMD_FWIDTH, m);
		}
		else
		{
			x[r] = SIMD_FLOAD(a + r * SIMD_FWIDTH);
			y[r] = SIMD_FLOAD(b + r * SIMD_FWIDTH);
		}
		if (l2)
			x[r] = SIMD_FSUB(x[r], y[r]);
	}
	UNROLL_LANES
	for (r = 0; r < SIMD_FREGS; r++)
		s[r] = SIMD_FADD(s[r], l2 ? SIMD_FMUL(x[r], x[r]) :
						 SIMD_FMUL(x[r], y[r]));
}

/*
 * The float kernels: sum (a - b)^2 (l2) or sum a * b (dot).  With bounded,
 * every BOUND_CHECK_BLOCKS blocks it combines the partial sums (by the same
 * tree) and returns that value once it is at least bound, as
 * l2_squared_bounded_scalar does.  l2 and bounded are constants in each
 * caller, so each kernel is compiled with only its own branch.
 */
SIMD_TARGET
static pg_attribute_always_inline float
SIMD_NAME(float_kernel) (const float *a, const float *b, int dim,
						 float bound, bool l2, bool bounded)
{
	simd_f		s[SIMD_FREGS];
	int			i = 0;
	int			k = 0;
	int			r;

	UNROLL_LANES
	for (r = 0; r < SIMD_FREGS; r++)
		s[r] = SIMD_FZERO();

	for (; i + FLOAT_LANES <= dim; i += FLOAT_LANES)
	{
		SIMD_NAME(float_block) (s, a + i, b + i, false, 0, l2);
		if (bounded && ++k % BOUND_CHECK_BLOCKS == 0 &&
			i + 2 * FLOAT_LANES <= dim)
		{
			float		sum = SIMD_FREDUCE(s);

			if (sum >= bound)
				return sum;
		}
	}
	if (i < dim)
		SIMD_NAME(float_block) (s, a + i, b + i, true, dim - i, l2);

	return SIMD_FREDUCE(s);
}

SIMD_TARGET
static float
SIMD_NAME(l2_squared) (const float *a, const float *b, int dim)
{
	return SIMD_NAME(float_kernel) (a, b, dim, 0.0f, true, false);
}

/* l2_squared that may stop early, as l2_squared_bounded_scalar */
SIMD_TARGET
static float
SIMD_NAME(l2_squared_bounded) (const float *a, const float *b, int dim,
							   float bound)
{
	return SIMD_NAME(float_kernel) (a, b, dim, bound, true, true);
}

SIMD_TARGET
static float
SIMD_NAME(dot) (const float *a, const float *b, int dim)
{
	return SIMD_NAME(float_kernel) (a, b, dim, 0.0f, false, false);
}

/* One block of the cosine kernel: d += a b, x += a^2, y += b^2 */
SIMD_TARGET
static pg_attribute_always_inline void
SIMD_NAME(cosine_block) (simd_d *d, simd_d *x, simd_d *y,
						 const simd_d *av, const simd_d *bv)
{
	int			r;

	UNROLL_LANES
	for (r = 0; r < SIMD_DREGS; r++)
	{
		d[r] = SIMD_DFMADD(av[r], bv[r], d[r]);
		x[r] = SIMD_DFMADD(av[r], av[r], x[r]);
		y[r] = SIMD_DFMADD(bv[r], bv[r], y[r]);
	}
}

/*
 * Fused cosine parts in double, DOUBLE_LANES floats per iteration widened
 * to doubles.  A fused multiply-add gives the same bits as a multiply and
 * an add here, as the product of two floats is exact in double.
 */
SIMD_TARGET
static void
SIMD_NAME(cosine_parts) (const float *a, const float *b, int dim,
						 double *dot, double *norma, double *normb)
{
	simd_d		d[SIMD_DREGS];
	simd_d		x[SIMD_DREGS];
	simd_d		y[SIMD_DREGS];
	simd_d		av[SIMD_DREGS];
	simd_d		bv[SIMD_DREGS];
	int			i = 0;
	int			r;

	UNROLL_LANES
	for (r = 0; r < SIMD_DREGS; r++)
	{
		d[r] = SIMD_DZERO();
		x[r] = SIMD_DZERO();
		y[r] = SIMD_DZERO();
	}

	for (; i + DOUBLE_LANES <= dim; i += DOUBLE_LANES)
	{
		SIMD_DWIDEN(a + i, av);
		SIMD_DWIDEN(b + i, bv);
		SIMD_NAME(cosine_block) (d, x, y, av, bv);
	}
	if (i < dim)
	{
		SIMD_DWIDEN_TAIL(a + i, dim - i, av);
		SIMD_DWIDEN_TAIL(b + i, dim - i, bv);
		SIMD_NAME(cosine_block) (d, x, y, av, bv);
	}

	*dot = SIMD_DREDUCE(d);
	*norma = SIMD_DREDUCE(x);
	*normb = SIMD_DREDUCE(y);
}

#undef SIMD_NAME
#undef SIMD_NAME2_
#undef SIMD_NAME_
#undef SIMD_ISA
#undef SIMD_TARGET
#undef simd_f
#undef simd_d
#undef SIMD_FREGS
#undef SIMD_FWIDTH
#undef SIMD_DREGS
#undef SIMD_FZERO
#undef SIMD_FLOAD
#undef SIMD_FADD
#undef SIMD_FSUB
#undef SIMD_FMUL
#undef simd_fmask
#undef SIMD_FTAIL_MASK
#undef SIMD_FLOAD_MASKED
#undef SIMD_FREDUCE
#undef SIMD_DZERO
#undef SIMD_DFMADD
#undef SIMD_DWIDEN
#undef SIMD_DWIDEN_TAIL
#undef SIMD_DREDUCE
