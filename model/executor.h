/*
 * executor.h: the executor table and its entry points (model layer; the interface is
 * model/exec.h, its rules E1-E6). A command picks a method (one setting, a row each, as
 * PostgreSQL's io_method picks an AIO method table), starts it before it opens anything,
 * has the leader lead and every other process serve, and ends it last:
 *
 *   pn_exec_start(&x, method, workers, stop, rank_timeout_s)   MPI_Init under MPI
 *   if (pn_exec_leads(&x)) ... pn_exec_run(&x, &work) ... else pn_exec_run(&x, &work)
 *   rc = pn_exec_end(&x, rc, aborted)                           MPI_Finalize / MPI_Abort
 */
#ifndef PN_EXECUTOR_H
#define PN_EXECUTOR_H

#include "exec.h"

/* The method named (serial, processes, mpi): false when there is none by that name. */
bool pn_exec_method_parse(const char *name, enum pn_exec_method *m);
/* Whether this binary has the method's row (MPI: built with PN_MPI). */
bool pn_exec_method_built(enum pn_exec_method m);
/* Whether this process was started by mpirun / srun (OMPI_COMM_WORLD_SIZE, PMIX_RANK or
 * PMI_RANK in the environment). */
bool pn_exec_mpi_detected(void);
/* NULL when the MPI row is there, else why not, for people: built without MPI; its module
 * not installed (where it was looked for); or there and not loadable (dlerror's words). */
const char *pn_exec_mpi_missing(void);

/* The CPUs this process may run on (its affinity mask, sched_getaffinity; the online CPUs
 * when that fails), at least 1: what `check` takes for --jobs when none is given. */
uint32_t pn_exec_cpus(void);

/* Fills x for the method (built: pn_exec_method_built) and runs its start. */
void pn_exec_start(struct pn_exec *x, enum pn_exec_method m, uint32_t workers,
		   const volatile sig_atomic_t *stop, double rank_timeout_s);
/* Whether this process leads (it is not an MPI rank other than 0). */
bool pn_exec_leads(const struct pn_exec *x);
/* The leader: every unit of w run (E1-E6); any other process: units served until the
 * leader is done. */
void pn_exec_run(struct pn_exec *x, const struct pn_exec_work *w);
/* The end of the job: the exit status (MPI may abort the job here, mpirank.h MR2). */
int pn_exec_end(struct pn_exec *x, int rc, bool aborted);

#endif
