export function sign(x: number): number {
  if (x > 0) {
    return 1;
  }
  return x < 0 ? -1 : 0;
}
