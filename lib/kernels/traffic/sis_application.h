/* What the simulator (sim/scenario.h) and hfstack-console drive: one SIS client
 * application, sans-IO. The test client (test_client.h) is one; the IP client and the
 * HF-PEP of later issues plug in the same way.
 *
 * Contract: start(now) once; every primitive from the node to on_primitive(); on_timer()
 * once now has reached next_deadline(); after each of these calls, send what
 * take_outgoing() returns, in order. */
#ifndef HFSTACK_KERNELS_TRAFFIC_SIS_APPLICATION_H
#define HFSTACK_KERNELS_TRAFFIC_SIS_APPLICATION_H

#include "dl/sis.h"

#include <vector>

namespace gr {
namespace hfstack {
namespace traffic {

class sis_application
{
public:
    virtual ~sis_application() = default;
    virtual void start(double now) = 0;
    virtual void on_primitive(const dl::sis_primitive& p, double now) = 0;
    virtual void on_timer(double now) = 0;
    // +inf when no timer is wanted.
    virtual double next_deadline() const = 0;
    virtual std::vector<dl::sis_primitive> take_outgoing() = 0;
    // The application has nothing more to do (a finite test is over).
    virtual bool done() const = 0;
};

} // namespace traffic
} // namespace hfstack
} // namespace gr

#endif
