// rttlab's estimators inside ns-3's TCP: an ns3::RttEstimator that calls rttlab's C ABI
// (src/ffi.rs). Compiled at run time by cppyy (rttlab/peers/ns3/rtt.py, which documents the
// mapping of rttlab's RTO onto ns-3's timer); every definition is inline, so the file is a
// header-like unit that cppyy.cppdef takes as it is.
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include <cstdint>
#include <string>
#include <vector>
#include <map>

namespace rttlab_bridge {
using namespace ns3;

struct Ctx { uint64_t now_ns; double cwnd, ssthresh, max_cwnd; int32_t new_window; uint64_t ack_delay_ns; };
typedef void* (*NewFn)(const char*, const char*);
typedef void (*SampleFn)(void*, uint64_t, const Ctx*);
typedef void (*ArmFn)(void*, const Ctx*);
typedef int32_t (*SeedFn)(void*, uint64_t, uint32_t);
typedef uint64_t (*U64Fn)(const void*);
typedef void (*VoidFn)(void*);
typedef const char* (*ErrFn)();

struct Abi { NewFn make = nullptr; SampleFn sample = nullptr; ArmFn arm = nullptr; SeedFn seed = nullptr; U64Fn rto = nullptr, prediction = nullptr; VoidFn timeout = nullptr, release = nullptr; ErrFn error = nullptr; };
inline Abi g_abi;
inline std::string g_name, g_params, g_error;
// The run's seed: with the flow's index it seeds the flow's estimator's random stream (CA-RTO's
// draws), as rttlab's simulator seeds flow f's (rttlab_estimator_seed_stream).
inline uint64_t g_seed = 1;

inline void SetAbi(uintptr_t make, uintptr_t sample, uintptr_t arm, uintptr_t seed, uintptr_t rto, uintptr_t prediction, uintptr_t timeout, uintptr_t release, uintptr_t error) {
    g_abi.make = reinterpret_cast<NewFn>(make);
    g_abi.sample = reinterpret_cast<SampleFn>(sample);
    g_abi.arm = reinterpret_cast<ArmFn>(arm);
    g_abi.seed = reinterpret_cast<SeedFn>(seed);
    g_abi.rto = reinterpret_cast<U64Fn>(rto);
    g_abi.prediction = reinterpret_cast<U64Fn>(prediction);
    g_abi.timeout = reinterpret_cast<VoidFn>(timeout);
    g_abi.release = reinterpret_cast<VoidFn>(release);
    g_abi.error = reinterpret_cast<ErrFn>(error);
}

// Per-sample columns (one entry per RTT sample of an attached flow).
struct Samples {
    std::vector<int64_t> flow, calls; std::vector<uint64_t> t, rtt, exact, before, after, rto, rto_end, ns3_rto, armed;
    std::vector<double> cwnd, ssthresh;
};
inline Samples g_s;
// Optional log of every call into the estimator of an attached flow (kind 0 sample, 1 cwnd
// changed → on_timer_armed, 2 timeout), with the context passed and rttlab's RTO after the call:
// what a replay outside ns-3 needs to recompute the RTO (tests/test_ns3_bridge.py).
struct Calls {
    std::vector<int64_t> flow, kind; std::vector<uint64_t> t, rtt, rto;
    std::vector<double> cwnd, ssthresh, max_cwnd;
};
inline Calls g_c;
inline bool g_log_calls = false;
inline void LogCall(int64_t flow, int64_t kind, uint64_t rtt, const Ctx& c, uint64_t rto) {
    if (!g_log_calls || flow < 0) return;
    g_c.flow.push_back(flow); g_c.kind.push_back(kind); g_c.t.push_back(c.now_ns); g_c.rtt.push_back(rtt); g_c.rto.push_back(rto);
    g_c.cwnd.push_back(c.cwnd); g_c.ssthresh.push_back(c.ssthresh); g_c.max_cwnd.push_back(c.max_cwnd);
}
// Per retransmitted segment.
inline std::vector<int64_t> g_rx_flow; inline std::vector<uint64_t> g_rx_t, g_rx_seq;
// Per flow.
struct Flow { uint64_t sent = 0, retx = 0, timeouts = 0, samples = 0; uint64_t high = 0; bool any = false;
              double cwnd_integral = 0, cwnd_last = 0; uint64_t cwnd_t = 0, start = 0, last_sample = 0; };
inline std::vector<Flow> g_flows;
inline bool g_failed = false;
// cwnd above this (bytes) counts as this in the mean cwnd (the receiver's window: BSD caps
// snd_cwnd there, ns-3 lets it grow without bound while the receiver's window limits the flight).
inline double g_cwnd_cap = 1e300;
// > 0: samples reach the estimator as BSD's slow timer measures them (t_rtt, in ticks of this
// many ns: 1 + the timer's ticks between the segment's send and its ACK, ticks at multiples of it).
inline uint64_t g_tick_ns = 0;

inline void Clear() {
    g_s = Samples(); g_c = Calls(); g_rx_flow.clear(); g_rx_t.clear(); g_rx_seq.clear(); g_flows.clear(); g_failed = false; g_error.clear();
}

// The protected members of TcpSocketBase the bridge reads (a derived class may name them).
struct Peek : public TcpSocketBase {
    static Ptr<RttEstimator> Rtt(TcpSocketBase* s) { return s->*(&Peek::m_rtt); }
    static Ptr<TcpSocketState> Tcb(TcpSocketBase* s) { return s->*(&Peek::m_tcb); }
    static Time Rto(TcpSocketBase* s) { return (s->*(&Peek::m_rto)).Get(); }
    static EventId RetxEvent(TcpSocketBase* s) { return s->*(&Peek::m_retxEvent); }
};

class RttlabEstimator : public RttEstimator {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::RttlabEstimator")
                                .SetParent<RttEstimator>()
                                .SetGroupName("Internet")
                                .AddConstructor<RttlabEstimator>();
        return tid;
    }
    RttlabEstimator() { Make(); }
    RttlabEstimator(const RttlabEstimator& r) : RttEstimator(r) { Make(); }
    ~RttlabEstimator() override { if (m_e) g_abi.release(m_e); }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }

    void Measurement(Time m) override {
        if (!m_e) return;
        uint64_t now = Simulator::Now().GetNanoSeconds();
        uint64_t before = g_abi.prediction(m_e);
        Ctx c = Context(now, -1);
        uint64_t exact = uint64_t(m.GetNanoSeconds()), fed = exact;
        if (g_tick_ns > 0) {
            uint64_t sent = now > exact ? now - exact : 0;
            fed = (1 + now / g_tick_ns - sent / g_tick_ns) * g_tick_ns;
        }
        g_abi.sample(m_e, fed, &c);
        Publish();
        LogCall(m_flow, 0, fed, c, g_abi.rto(m_e));
        m_nSamples++;
        if (m_flow >= 0) {
            size_t i = g_s.t.size();
            g_s.flow.push_back(m_flow); g_s.t.push_back(now); g_s.rtt.push_back(fed); g_s.exact.push_back(exact);
            g_s.before.push_back(before); g_s.after.push_back(g_abi.prediction(m_e)); g_s.rto.push_back(g_abi.rto(m_e));
            g_s.rto_end.push_back(0); g_s.calls.push_back(0);
            g_s.ns3_rto.push_back(0); g_s.armed.push_back(0); g_s.cwnd.push_back(c.cwnd); g_s.ssthresh.push_back(c.ssthresh);
            Flow& f = g_flows[m_flow]; f.samples++; f.last_sample = now;
            // EstimateRtt sets m_rto right after this call and the ACK's processing (re)arms the
            // timer (NewAck reads the estimate again after the congestion control has moved
            // cwnd): read both once the current event is over.
            Simulator::ScheduleNow(&RttlabEstimator::ReadSocket, this, m_socket, i);
        }
    }
    static void ReadSocket(RttlabEstimator* e, TcpSocketBase* s, size_t i) {
        g_s.ns3_rto[i] = uint64_t(Peek::Rto(s).GetNanoSeconds());
        g_s.rto_end[i] = e->m_e ? g_abi.rto(e->m_e) : 0;
        g_s.calls[i] = int64_t(g_c.t.size());
        // The timer's delay if it is running now: the ACK that gave the sample (re)armed it
        // with ns-3's RTO when it acknowledged new data and data is still outstanding.
        EventId ev = Peek::RetxEvent(s);
        if (ev.IsPending()) g_s.armed[i] = uint64_t(Simulator::GetDelayLeft(ev).GetNanoSeconds());
    }
    Ptr<RttEstimator> Copy() const override { return CopyObject<RttlabEstimator>(this); }
    void Reset() override {
        RttEstimator::Reset();
        if (m_e) g_abi.release(m_e);
        m_e = nullptr;
        Make();
        if (m_e && m_flow >= 0) g_abi.seed(m_e, g_seed, uint32_t(m_flow));
    }
    void Timeout() {
        if (!m_e) return;
        g_abi.timeout(m_e);
        Publish();
        LogCall(m_flow, 2, 0, Context(Simulator::Now().GetNanoSeconds(), -1), g_abi.rto(m_e));
    }
    void Bind(TcpSocketBase* s, int64_t flow) {
        m_socket = s; m_flow = flow;
        // The flow's own random stream (CA-RTO's draws), from the run's seed and the flow's index.
        if (m_e) g_abi.seed(m_e, g_seed, uint32_t(flow));
    }
    // The sender's cwnd changed (the socket's CongestionWindow trace, in C++; `bytes` is the new
    // value: ns-3 calls the trace before storing it). The timer's RTO follows: rttlab's
    // on_timer_armed (CA-RTO draws p with this cwnd and max_cwnd) and the estimate/variation ns-3
    // reads when it next computes its RTO (NewAck, right before it re-arms the timer).
    void CwndChanged(uint32_t bytes) {
        if (!m_e || !m_socket) return;
        Ctx c = Context(Simulator::Now().GetNanoSeconds(), int64_t(bytes));
        g_abi.arm(m_e, &c);
        Publish();
        LogCall(m_flow, 1, 0, c, g_abi.rto(m_e));
    }
    // A congestion event (the CongState trace, before ns-3 reduces cwnd): max_cwnd, CA-RTO's
    // "max congestion window prior to congestion", is cwnd now — at fast retransmit (→ CA_RECOVERY),
    // an ECN reduction (→ CA_CWR) and the first timeout of an episode (→ CA_LOSS, except from
    // CA_RECOVERY: a timeout ending a fast recovery belongs to its episode, as in rttlab's sender).
    void CongestionEvent(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to) {
        if (!m_socket) return;
        bool event = to == TcpSocketState::CA_RECOVERY || to == TcpSocketState::CA_CWR ||
                     (to == TcpSocketState::CA_LOSS && from != TcpSocketState::CA_RECOVERY);
        if (!event) return;
        Ptr<TcpSocketState> tcb = Peek::Tcb(m_socket);
        m_maxCwnd = double(tcb->m_cWnd.Get()) / tcb->m_segmentSize;
    }

  private:
    // The context rttlab's estimator gets: cwnd (`cwnd_bytes`, or the socket's when < 0), ssthresh
    // and max_cwnd in segments; unknown (−1) without a socket.
    Ctx Context(uint64_t now, int64_t cwnd_bytes) const {
        Ctx c{now, -1.0, -1.0, m_maxCwnd, -1, 0};
        if (m_socket) {
            Ptr<TcpSocketState> tcb = Peek::Tcb(m_socket);
            double seg = tcb->m_segmentSize;
            c.cwnd = double(cwnd_bytes >= 0 ? uint64_t(cwnd_bytes) : uint64_t(tcb->m_cWnd.Get())) / seg;
            c.ssthresh = double(tcb->m_ssThresh.Get()) / seg;
        }
        return c;
    }
    void Make() {
        m_e = g_abi.make ? g_abi.make(g_name.c_str(), g_params.c_str()) : nullptr;
        if (!m_e) { g_failed = true; g_error = g_abi.error ? g_abi.error() : "the rttlab C ABI is not set"; return; }
        Publish();
    }
    // ns-3: RTO = max(MinRto = 0, estimate + max(G = 1 ns, 4·variation)) == rttlab's RTO.
    void Publish() {
        int64_t rto = int64_t(g_abi.rto(m_e));
        int64_t pred = int64_t(g_abi.prediction(m_e));
        if (pred <= 0) pred = rto / 3;  // no prediction yet: any split of the initial RTO
        int64_t var = rto > pred ? (rto - pred) / 4 : 0;
        int64_t est = rto > pred ? rto - 4 * var : rto - 1;
        m_estimatedRtt = NanoSeconds(est);
        m_estimatedVariation = NanoSeconds(var);
    }
    void* m_e = nullptr;
    TcpSocketBase* m_socket = nullptr;
    int64_t m_flow = -1;
    double m_maxCwnd = -1.0;  // segments; unknown until the first congestion event
};

inline void OnTx(int64_t flow, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    uint32_t n = p->GetSize();
    if (n == 0) return;
    Flow& f = g_flows[flow];
    uint64_t seq = h.GetSequenceNumber().GetValue();
    uint64_t end = seq + n;
    f.sent++;
    if (f.any && seq < f.high) {  // below the highest byte sent: a retransmission
        f.retx++;
        g_rx_flow.push_back(flow); g_rx_t.push_back(Simulator::Now().GetNanoSeconds()); g_rx_seq.push_back(seq);
    }
    if (!f.any || end > f.high) f.high = end;
    f.any = true;
}

inline void OnCwnd(RttlabEstimator* e, int64_t flow, uint32_t oldv, uint32_t newv) {
    if (e) e->CwndChanged(newv);
    Flow& f = g_flows[flow];
    uint64_t now = Simulator::Now().GetNanoSeconds();
    f.cwnd_integral += f.cwnd_last * double(now - f.cwnd_t) * 1e-9;
    f.cwnd_last = std::min(double(newv), g_cwnd_cap); f.cwnd_t = now;
}

inline void OnCongState(RttlabEstimator* e, int64_t flow, TcpSocketState::TcpCongState_t before, TcpSocketState::TcpCongState_t now) {
    if (e) e->CongestionEvent(before, now);
    if (now == TcpSocketState::CA_LOSS) { g_flows[flow].timeouts++; if (e) e->Timeout(); }
}

inline void DoAttach(Ptr<Application> app, int64_t flow) {
    Ptr<BulkSendApplication> b = DynamicCast<BulkSendApplication>(app);
    Ptr<TcpSocketBase> s = b ? DynamicCast<TcpSocketBase>(b->GetSocket()) : nullptr;
    if (!s) { g_failed = true; g_error = "flow " + std::to_string(flow) + ": no TCP socket at its start"; return; }
    Flow& f = g_flows[flow];
    f.start = Simulator::Now().GetNanoSeconds();
    f.cwnd_t = f.start;
    Ptr<TcpSocketState> tcb = Peek::Tcb(PeekPointer(s));
    f.cwnd_last = std::min(double(tcb->m_cWnd.Get()), g_cwnd_cap);
    RttlabEstimator* e = dynamic_cast<RttlabEstimator*>(PeekPointer(Peek::Rtt(PeekPointer(s))));
    if (e) e->Bind(PeekPointer(s), flow);
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, flow));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, e, flow));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, e, flow));
}

inline void StartAttach(Ptr<Application> app, int64_t flow) {
    // Runs after the application's own start event (scheduled earlier at this instant), which
    // created the socket.
    Simulator::ScheduleNow(&DoAttach, app, flow);
}

// Attach flow `flow` (0, 1, ...) to the BulkSendApplication `app` that starts at `start`.
inline void Attach(Ptr<Application> app, int64_t flow, double start) {
    if (int64_t(g_flows.size()) <= flow) g_flows.resize(flow + 1);
    Simulator::Schedule(Seconds(start), &StartAttach, app, flow);
}

// The time-weighted cwnd (bytes) of a flow from its start to its last RTT sample.
inline double MeanCwnd(int64_t flow) {
    Flow& f = g_flows[flow];
    uint64_t end = f.last_sample;
    if (end <= f.start) return -1.0;
    double integral = f.cwnd_integral + (end > f.cwnd_t ? f.cwnd_last * double(end - f.cwnd_t) * 1e-9 : 0.0);
    return integral / (double(end - f.start) * 1e-9);
}

template <typename T> uintptr_t Data(std::vector<T>& v) { return reinterpret_cast<uintptr_t>(v.data()); }
}  // namespace rttlab_bridge
