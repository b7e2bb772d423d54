/** The part of jstat (no bundled types) that model/race/uncertainty.ts and model/race/paired-comparison.ts use. */
declare module 'jstat' {
  export const jStat: {
    studentt: { inv(p: number, dof: number): number };
    binomial: { cdf(k: number, n: number, p: number): number };
    stdev(values: number[], sample?: boolean): number;
  };
}
