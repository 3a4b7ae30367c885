// Some flows' sender state at every ACK they receive in ns-3 (rttlab/peers/ns3/ack_trace.py):
// what docs/ns3-comparison.md sets beside rttlab's traces, packet by packet. Compiled at run time
// by cppyy; every definition is inline (a header-like unit that cppyy.cppdef takes as it is).
//
// The socket's "Rx" trace fires when a segment arrives, before TCP processes it, so each row is
// the state the previous ACK left (its `ack` column is the arriving ACK's number): the state after
// ACK k is row k+1. TcpVegas' and TcpVeno's estimator fields are private; they are read through
// the explicit-instantiation rule (access checks do not apply to the template arguments of an
// explicit instantiation, C++17 [temp.explicit]/14), without changing ns-3.
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include <cstdint>
#include <string>
#include <vector>

namespace rttlab_ack_trace {
using namespace ns3;

template <typename Tag, typename Tag::type M> struct Grant {
    friend typename Tag::type Get(Tag) { return M; }
};
#define RTTLAB_FIELD(NAME, CLASS, TYPE, MEMBER)                 \
    struct NAME { typedef TYPE CLASS::*type; friend type Get(NAME); }; \
    template struct Grant<NAME, &CLASS::MEMBER>;
RTTLAB_FIELD(VegasBase, TcpVegas, Time, m_baseRtt)
RTTLAB_FIELD(VegasMin, TcpVegas, Time, m_minRtt)
RTTLAB_FIELD(VegasCnt, TcpVegas, uint32_t, m_cntRtt)
RTTLAB_FIELD(VegasOn, TcpVegas, bool, m_doingVegasNow)
RTTLAB_FIELD(VenoBase, TcpVeno, Time, m_baseRtt)
RTTLAB_FIELD(VenoMin, TcpVeno, Time, m_minRtt)
RTTLAB_FIELD(VenoCnt, TcpVeno, uint32_t, m_cntRtt)
RTTLAB_FIELD(VenoOn, TcpVeno, bool, m_doingVenoNow)
RTTLAB_FIELD(VenoDiff, TcpVeno, uint32_t, m_diff)
RTTLAB_FIELD(VenoInc, TcpVeno, bool, m_inc)
#undef RTTLAB_FIELD

struct Peek : public TcpSocketBase {
    static Ptr<TcpSocketState> Tcb(TcpSocketBase* s) { return s->*(&Peek::m_tcb); }
    static Ptr<TcpCongestionOps> Cc(TcpSocketBase* s) { return s->*(&Peek::m_congestionControl); }
};

// Columns; -1 where a field does not apply (a time never set is Time::Max → -1 too).
struct Rows {
    std::vector<int64_t> flow, t, ack, cwnd, ssthresh, state, srtt, last_rtt, base_rtt, min_rtt, cnt_rtt, enabled, diff, inc;
};
inline Rows g_rows;
inline std::string g_error;

inline int64_t Ns(Time t) { return t == Time::Max() ? -1 : t.GetNanoSeconds(); }

inline void OnRx(std::pair<TcpSocketBase*, int64_t> fs, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if (!(h.GetFlags() & TcpHeader::ACK)) return;
    TcpSocketBase* s = fs.first;
    Ptr<TcpSocketState> tcb = Peek::Tcb(s);
    Ptr<TcpCongestionOps> cc = Peek::Cc(s);
    Rows& r = g_rows;
    r.flow.push_back(fs.second);
    r.t.push_back(Simulator::Now().GetNanoSeconds());
    r.ack.push_back(h.GetAckNumber().GetValue());
    r.cwnd.push_back(tcb->m_cWnd.Get());
    r.ssthresh.push_back(tcb->m_ssThresh.Get());
    r.state.push_back(int64_t(tcb->m_congState.Get()));
    r.srtt.push_back(tcb->m_srtt.Get().GetNanoSeconds());
    r.last_rtt.push_back(tcb->m_lastRtt.Get().GetNanoSeconds());
    int64_t base = -1, min = -1, cnt = -1, on = -1, diff = -1, inc = -1;
    if (TcpVegas* v = dynamic_cast<TcpVegas*>(PeekPointer(cc))) {
        base = Ns(v->*Get(VegasBase{})), min = Ns(v->*Get(VegasMin{})), cnt = v->*Get(VegasCnt{}), on = v->*Get(VegasOn{});
    } else if (TcpVeno* v = dynamic_cast<TcpVeno*>(PeekPointer(cc))) {
        base = Ns(v->*Get(VenoBase{})), min = Ns(v->*Get(VenoMin{})), cnt = v->*Get(VenoCnt{}), on = v->*Get(VenoOn{});
        diff = v->*Get(VenoDiff{}), inc = v->*Get(VenoInc{});
    }
    r.base_rtt.push_back(base), r.min_rtt.push_back(min), r.cnt_rtt.push_back(cnt), r.enabled.push_back(on);
    r.diff.push_back(diff), r.inc.push_back(inc);
}

inline void DoAttach(Ptr<Application> app, int64_t flow) {
    Ptr<BulkSendApplication> b = DynamicCast<BulkSendApplication>(app);
    Ptr<TcpSocketBase> s = b ? DynamicCast<TcpSocketBase>(b->GetSocket()) : nullptr;
    if (!s) { g_error = "no TCP socket at the traced flow's start"; return; }
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, std::make_pair(PeekPointer(s), flow)));
}

inline void StartAttach(Ptr<Application> app, int64_t flow) { Simulator::ScheduleNow(&DoAttach, app, flow); }

inline void Clear() {
    g_rows = Rows();
    g_error.clear();
}

// Trace the BulkSendApplication `app` that starts at `start` s as `flow` (after the
// application's own start event, which creates the socket).
inline void Attach(Ptr<Application> app, int64_t flow, double start) {
    Simulator::Schedule(Seconds(start), &StartAttach, app, flow);
}

inline uintptr_t Data(std::vector<int64_t>& v) { return reinterpret_cast<uintptr_t>(v.data()); }
}  // namespace rttlab_ack_trace

// ns-3's TcpVegas and TcpVeno with the departures from Linux that docs/ns3-comparison.md traces
// undone one at a time, to measure what each costs (never the default mapping):
// - TcpVegasLinuxRtt / TcpVenoLinuxRtt: PktsAcked gets the ACK's own RTT sample (ns-3's m_lastRtt:
//   the newest segment it covers, Linux's `sample->rtt_us`) instead of the smoothed RTT that
//   TcpSocketBase passes to every congestion control (m_srtt), and only when the ACK gave one.
// - TcpVenoLinux: also keeps cntRtt across ACKs (Linux tcp_veno.c: `/* veno->cntrtt = 0; */`);
//   ns-3's IncreaseWindow zeroes it after every ACK, so it never has more than 2 samples there.
namespace rttlab_ack_trace {
template <typename Base> struct LastRttSample : public Base {
    Time last;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segs, const Time&) override {
        Time rtt = tcb->m_lastRtt.Get();
        if (rtt.IsZero()) return;
        // EstimateRtt ran just before: a sample equal in value to the last one is still a new
        // sample unless the ACK carried none; ns-3 does not tell the two apart, so both count.
        Base::PktsAcked(tcb, segs, rtt);
    }
};

struct TcpVegasLinuxRtt : public LastRttSample<TcpVegas> {
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::TcpVegasLinuxRtt").SetParent<TcpVegas>().SetGroupName("Internet").AddConstructor<TcpVegasLinuxRtt>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpVegasLinuxRtt>(this); }
};

struct TcpVenoLinuxRtt : public LastRttSample<TcpVeno> {
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::TcpVenoLinuxRtt").SetParent<TcpVeno>().SetGroupName("Internet").AddConstructor<TcpVenoLinuxRtt>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpVenoLinuxRtt>(this); }
};

struct TcpVenoLinux : public LastRttSample<TcpVeno> {
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::TcpVenoLinux").SetParent<TcpVeno>().SetGroupName("Internet").AddConstructor<TcpVenoLinux>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpVenoLinux>(this); }
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segs) override {
        uint32_t kept = this->*Get(VenoCnt{});
        TcpVeno::IncreaseWindow(tcb, segs);
        this->*Get(VenoCnt{}) = kept;
    }
};

inline void RegisterVariants() {
    TcpVegasLinuxRtt::GetTypeId();
    TcpVenoLinuxRtt::GetTypeId();
    TcpVenoLinux::GetTypeId();
}
}  // namespace rttlab_ack_trace
