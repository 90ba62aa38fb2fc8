/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* What the simulator (traffic/scenario.h) and hfstack-console drive: one SIS client
 * application, sans-IO. The test client (test_client.h) is one; the IP client and the
 * HF-PEP of later issues plug in the same way.
 *
 * Contract: start(now) once; every primitive from the node to on_primitive(); on_timer()
 * once now has reached next_deadline(); after each of these calls, send what
 * take_outgoing() returns, in order. */
#ifndef HFSTACK_KERNELS_TRAFFIC_SIS_APPLICATION_H
#define HFSTACK_KERNELS_TRAFFIC_SIS_APPLICATION_H

#include "dl/sis.h"

#include <memory>
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

// A scenario owns (and ends) its applications: this one lends it an application the
// caller keeps, so its report can be read after the run.
template <typename App>
class lent_application : public sis_application
{
public:
    explicit lent_application(std::shared_ptr<App> app) : d_app(std::move(app)) {}
    void start(double now) override { d_app->start(now); }
    void on_primitive(const dl::sis_primitive& p, double now) override
    {
        d_app->on_primitive(p, now);
    }
    void on_timer(double now) override { d_app->on_timer(now); }
    double next_deadline() const override { return d_app->next_deadline(); }
    std::vector<dl::sis_primitive> take_outgoing() override
    {
        return d_app->take_outgoing();
    }
    bool done() const override { return d_app->done(); }

private:
    std::shared_ptr<App> d_app;
};

} // namespace traffic
} // namespace hfstack
} // namespace gr

#endif
