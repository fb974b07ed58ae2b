/* Runs a program and reports what it cost: `measure PROG [ARGS...]` prints
 * "cpu_us peak_kib wall_us" of the child (user + system CPU time, peak
 * resident memory, wall time). A small process of its own, because Linux
 * counts the image a child had before exec in its peak memory: spawned from
 * the (large) benchmark process it would report the benchmark's size. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PROG [ARGS...]\n", argv[0]);
    return 2;
  }
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  int status;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid) return 2;
  clock_gettime(CLOCK_MONOTONIC, &end);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s exited with status %d\n", argv[1], status);
    return 1;
  }
  long cpu = usage.ru_utime.tv_sec * 1000000L + usage.ru_utime.tv_usec +
             usage.ru_stime.tv_sec * 1000000L + usage.ru_stime.tv_usec;
  long wall = (end.tv_sec - start.tv_sec) * 1000000L + (end.tv_nsec - start.tv_nsec) / 1000;
  printf("%ld %ld %ld\n", cpu, usage.ru_maxrss, wall);
  return 0;
}
