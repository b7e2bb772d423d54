/** The part of jstat (no bundled types) that model/uncertainty.ts uses. */
declare module 'jstat' {
  export const jStat: {
    studentt: { inv(p: number, dof: number): number };
    stdev(values: number[], sample?: boolean): number;
  };
}
