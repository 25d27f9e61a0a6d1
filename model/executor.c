/*
 * executor.c: the executor table (model layer; executor.h, exec.h E1-E6). One row per
 * method, filled with designated initializers in its own file; MPI's row exists only in a
 * build with PN_MPI (PN_HAVE_MPI), so a build without it has no MPI code at all.
 */
#include "executor.h"

#include <stdlib.h>
#include <string.h>

#include "exec_procs.h"
#include "exec_serial.h"
#ifdef PN_HAVE_MPI
#include "exec_mpi.h"
#endif

static const struct pn_exec_ops *const methods[PN_EXEC_METHODS] = {
	[PN_EXEC_SERIAL] = &pn_exec_serial_ops,
	[PN_EXEC_PROCESSES] = &pn_exec_procs_ops,
#ifdef PN_HAVE_MPI
	[PN_EXEC_MPI] = &pn_exec_mpi_ops,
#endif
};

static const char *const method_names[PN_EXEC_METHODS] = {
	[PN_EXEC_SERIAL] = "serial",
	[PN_EXEC_PROCESSES] = "processes",
	[PN_EXEC_MPI] = "mpi",
};

bool pn_exec_method_parse(const char *name, enum pn_exec_method *m)
{
	for (int i = 0; i < PN_EXEC_METHODS; i++) {
		if (strcmp(name, method_names[i]) == 0) {
			*m = (enum pn_exec_method)i;
			return true;
		}
	}
	return false;
}

bool pn_exec_method_built(enum pn_exec_method m)
{
	return m < PN_EXEC_METHODS && methods[m] != NULL;
}

bool pn_exec_mpi_detected(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

void pn_exec_start(struct pn_exec *x, enum pn_exec_method m, uint32_t workers,
		   const volatile sig_atomic_t *stop, double rank_timeout_s)
{
	PN_ASSERT(pn_exec_method_built(m));
	PN_ASSERT(workers >= 1);
	*x = (struct pn_exec){.method = m,
			      .ops = methods[m],
			      .workers = workers,
			      .rank_timeout_s = rank_timeout_s,
			      .stop = stop,
			      .whole_units = m == PN_EXEC_SERIAL};
	PN_ASSERT(strcmp(x->ops->name, method_names[m]) == 0);
	if (x->ops->start)
		x->ops->start(x);
}

bool pn_exec_leads(const struct pn_exec *x) { return x->rank == 0; }

void pn_exec_run(struct pn_exec *x, const struct pn_exec_work *w)
{
	PN_ASSERT(w->next && w->run && w->done && w->failed && w->cancelled);
	x->summary[0] = '\0';
	if (pn_exec_leads(x))
		x->ops->lead(x, w);
	else
		x->ops->serve(x, w);
}

int pn_exec_end(struct pn_exec *x, int rc, bool aborted)
{
	return x->ops->end ? x->ops->end(x, rc, aborted) : rc;
}
