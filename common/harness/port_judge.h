/* port_judge.h — the judge's side of the port, shared by its two files (internal to the harness):
 * port.c, the protocol and the buffers the two processes share, and spawn.c, the lab process's
 * start, the channel's calibration and the lab process's end. */
#ifndef PORT_JUDGE_H
#define PORT_JUDGE_H

#include "port_wire.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    int on;                                   /* this process is a judge */
    int fd;                                   /* its end of the channel */
    pid_t pid;                                /* the lab process */
    uint64_t seq;                             /* of the last request */
    int sandboxed;                            /* the lab process said it is in its sandbox */
    double gpu_overhead_ms, host_overhead_ms; /* the channel's own cost (calibrate) */
    long long output_cap; /* RLIMIT_FSIZE of the lab process (lab_port_set_output_cap) */
    int wrapped;          /* the lab process runs under a tool (compute-sanitizer) */
    size_t live_count, live_bytes;
} port_judge;
extern port_judge lab_judge;

/* One request to the lab process, and the wait for its one reply (port.c): anything else on the
 * channel is tampering, and a lab process that ends meanwhile ends the judge as it ended. */
void lab_port_request(port_request *q);
void lab_port_await(const port_request *q, port_reply *a);
void lab_port_await_spins(const port_request *q, port_reply *a, int spins_left);
void lab_port_gone(const char *during);

/* The channel's own cost, measured once the lab process is up (spawn.c). */
void lab_port_calibrate(void);

#endif /* PORT_JUDGE_H */
