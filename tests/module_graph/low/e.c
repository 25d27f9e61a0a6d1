/* high_hook is named here in a comment only */
struct holder { int high_hook; };
static int count(struct holder *p, int h_counter)
{
	return p->high_hook + h_counter;
}
static const char *name(void) { return "high_hook"; }
static int h_helper(void) { return 2; }
int e_total(struct holder *p) { return count(p, 1) + (name() != 0) + h_helper(); }
