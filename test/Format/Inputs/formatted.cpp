// Formatted: test/Format/check-format.test expects it to pass.
int twice(int x) { return x * 2; }
