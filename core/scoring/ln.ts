/**
 * Natural logarithm that gives the same bits in every JavaScript engine: a port of fdlibm's
 * __ieee754_log (error < 1 ulp) using only IEEE-754 +, -, *, / and bit access.
 *
 * Math.log is implementation-defined: Chromium 156 and workerd/Node 20 return different last
 * bits for about 1% of integers (e.g. ln 3), which made the API's and the browser's JSON differ.
 * The scorers use ln() wherever a logarithm reaches a response (frequency score f(rank)).
 */
const LN2_HI = 6.9314718036912381649e-1;
const LN2_LO = 1.90821492927058770002e-10;
const TWO54 = 1.8014398509481984e16;
const LG1 = 6.66666666666673513e-1;
const LG2 = 3.999999999940941908e-1;
const LG3 = 2.857142874366239149e-1;
const LG4 = 2.222219843214978396e-1;
const LG5 = 1.818357216161805012e-1;
const LG6 = 1.531383769920937332e-1;
const LG7 = 1.479819860511658591e-1;

const view = new DataView(new ArrayBuffer(8));
const hiOf = (x: number): number => {
  view.setFloat64(0, x, true);
  return view.getInt32(4, true);
};

export function ln(input: number): number {
  let x = input;
  view.setFloat64(0, x, true);
  let hx = view.getInt32(4, true);
  const lx = view.getUint32(0, true);
  let k = 0;
  if (hx < 0x00100000) {
    if (((hx & 0x7fffffff) | lx) === 0) return -Infinity; // log(+-0)
    if (hx < 0) return NaN; // log(negative)
    k -= 54;
    x *= TWO54; // subnormal: scale up
    hx = hiOf(x);
  }
  if (hx >= 0x7ff00000) return x + x; // Inf or NaN
  k += (hx >> 20) - 1023;
  hx &= 0x000fffff;
  const i0 = (hx + 0x95f64) & 0x100000;
  // Normalize x or x/2 into [sqrt(2)/2, sqrt(2)).
  view.setFloat64(0, x, true);
  view.setInt32(4, hx | (i0 ^ 0x3ff00000), true);
  x = view.getFloat64(0, true);
  k += i0 >> 20;
  const f = x - 1.0;
  if ((0x000fffff & (2 + hx)) < 3) {
    // |f| < 2**-20
    if (f === 0) {
      if (k === 0) return 0;
      return k * LN2_HI + k * LN2_LO;
    }
    const R = f * f * (0.5 - 0.3333333333333333 * f);
    if (k === 0) return f - R;
    return k * LN2_HI - (R - k * LN2_LO - f);
  }
  const s = f / (2.0 + f);
  const dk = k;
  const z = s * s;
  let i = hx - 0x6147a;
  const w = z * z;
  const j = 0x6b851 - hx;
  const t1 = w * (LG2 + w * (LG4 + w * LG6));
  const t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
  i |= j;
  const R = t2 + t1;
  if (i > 0) {
    const hfsq = 0.5 * f * f;
    if (k === 0) return f - (hfsq - s * (hfsq + R));
    return dk * LN2_HI - (hfsq - (s * (hfsq + R) + dk * LN2_LO) - f);
  }
  if (k === 0) return f - s * (f - R);
  return dk * LN2_HI - (s * (f - R) - dk * LN2_LO - f);
}
