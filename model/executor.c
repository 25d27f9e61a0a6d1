/*
 * executor.c: the executor table (model layer; executor.h, exec.h E1-E6). One row per
 * method, filled with designated initializers in its own file. MPI's row is in a module of
 * its own (PN_MPI builds: libpn_exec_mpi.so beside the binary, or the file the environment's
 * PN_MPI_MODULE names), loaded the first time MPI is asked for: the binary never links
 * libmpi, so it runs where no MPI is installed, and without the module it has no MPI row.
 */
#define _GNU_SOURCE /* memrchr */
#include "executor.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_procs.h"
#include "exec_serial.h"

static const struct pn_exec_ops *methods[PN_EXEC_METHODS] = {
	[PN_EXEC_SERIAL] = &pn_exec_serial_ops,
	[PN_EXEC_PROCESSES] = &pn_exec_procs_ops,
};

/* Why there is no MPI row, for pn_exec_mpi_missing (set by mpi_row). */
static char mpi_why[1024] = "this penumbra was built without MPI (cmake -DPN_MPI=ON, "
			    "docs/cluster.md)";

#ifdef PN_MPI_MODULE
/* dlopen of the module at path; a file that exists and does not load says why in mpi_why. */
static void *mpi_open(const char *path)
{
	/* RTLD_GLOBAL: Open MPI's own plugins resolve against libmpi */
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h && access(path, F_OK) == 0)
		snprintf(mpi_why, sizeof(mpi_why),
			 "the MPI module %s does not load (is Open MPI installed?): %s", path,
			 dlerror());
	return h;
}
#endif

/* The MPI row from its module, once (NULL: no module, or it does not load). */
static const struct pn_exec_ops *mpi_row(void)
{
#ifdef PN_MPI_MODULE
	static bool tried;
	char path[4096] = "";
	const char *env = getenv("PN_MPI_MODULE");
	if (tried)
		return methods[PN_EXEC_MPI];
	tried = true;
	void *h = NULL;
	if (env)
		snprintf(mpi_why, sizeof(mpi_why),
			 "the MPI module is not installed (PN_MPI_MODULE names %s, which does not "
			 "exist; docs/cluster.md)",
			 env);
	else
		snprintf(mpi_why, sizeof(mpi_why),
			 "the MPI module %s is not installed (looked for beside the binary and in "
			 "%s from it; Debian: the package penumbra-mpi; docs/cluster.md)",
			 PN_MPI_MODULE, PN_MPI_MODULE_DIR);
	if (env) {
		snprintf(path, sizeof(path), "%s", env);
		h = mpi_open(path);
	} else {
		/* beside the binary (a build tree), then where `cmake --install` puts it
		 * (PN_MPI_MODULE_DIR: the library folder relative to the binary's) */
		static const char *const dirs[] = {"", PN_MPI_MODULE_DIR "/"};
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		char *slash = n > 0 ? memrchr(path, '/', (size_t)n) : NULL;
		if (!slash)
			return NULL;
		for (size_t i = 0; !h && i < PN_ARRAY_LEN(dirs); i++) {
			size_t room = sizeof(path) - (size_t)(slash + 1 - path);
			if ((size_t)snprintf(slash + 1, room, "%s%s", dirs[i], PN_MPI_MODULE) <
			    room)
				h = mpi_open(path);
		}
	}
	methods[PN_EXEC_MPI] = h ? dlsym(h, "pn_exec_mpi_ops") : NULL;
#endif
	return methods[PN_EXEC_MPI];
}

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

uint32_t pn_exec_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (uint32_t)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint32_t)n : 1;
}

bool pn_exec_method_built(enum pn_exec_method m)
{
	if (m == PN_EXEC_MPI)
		return mpi_row() != NULL;
	return m < PN_EXEC_METHODS && methods[m] != NULL;
}

const char *pn_exec_mpi_missing(void) { return mpi_row() ? NULL : mpi_why; }

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
