// A ticket race: every thread takes a ticket from one global counter and
// picks its output by comparing the ticket with a threshold. Which threads
// get the low tickets depends on the order in which warps (and lanes) reach
// the atomic, so the output differs from run to run although the input is
// the same. The choice compiles to a compare feeding `selp` (no branch).
//
// Built two ways (see README.md): plain clang PTX (instrumented at load by
// the shim) or `prlxctl compile` (the pass). nvcc builds it too.

#if defined(__CUDACC__) && !defined(__clang__)
// nvcc: the CUDA headers are always there.
#define TAKE_TICKET(counter) atomicAdd((counter), 1u)
#define THREAD_INDEX() (blockIdx.x * blockDim.x + threadIdx.x)
#else
// clang without the CUDA headers (-nocudainc, or `prlxctl compile`): builtins.
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#define TAKE_TICKET(counter) ((unsigned)__nvvm_atom_add_gen_i((int *)(counter), 1))
#define THREAD_INDEX()                                                         \
  (__nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +           \
   __nvvm_read_ptx_sreg_tid_x())
#endif

extern "C" __global__ void ticket_race(unsigned *counter, unsigned threshold,
                                       const int *early, const int *late,
                                       int *out, unsigned *tickets) {
  unsigned i = THREAD_INDEX();
  unsigned ticket = TAKE_TICKET(counter); // RACE-ATOMIC
  int chosen = ticket < threshold ? early[i] : late[i]; // RACE-CHOICE
  out[i] = chosen;
  tickets[i] = ticket;
}
