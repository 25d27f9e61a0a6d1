/*
 * exec_mpi.h: the MPI executor (model layer, compiled only with PN_MPI, into the module
 * libpn_exec_mpi.so that model/executor.c loads on demand: mpirank.h MR3; exec.h E1-E6, the
 * wire in mpirank.h MR1-MR4, the user's view in docs/cluster.md).
 *
 * `mpirun -np N penumbra check ...`: every rank builds the same work list; rank 0 leads,
 * handing units to the other ranks (each runs one at a time in a child of its own) and
 * merging what comes back; the others serve until rank 0 stops them. With at most
 * PN_MPI_LEAD_CHECKS_UPTO ranks, or every other rank lost, rank 0 also runs units, one at a
 * time in a child of its own (the process executor's pool, one slot). With one rank it is
 * the serial executor. A leader unit (E4) runs in rank 0's own process.
 */
#ifndef PN_EXEC_MPI_H
#define PN_EXEC_MPI_H

#include "exec.h"

extern const struct pn_exec_ops pn_exec_mpi_ops;

#define PN_MPI_LEAD_CHECKS_UPTO 8

#endif
