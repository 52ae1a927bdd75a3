// Not formatted on purpose: test/Format/check-format.test expects
// scripts/check-format.sh to reject it.
int  twice( int x ) { return x*2; }
