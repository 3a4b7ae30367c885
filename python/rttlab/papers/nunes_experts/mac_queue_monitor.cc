// The Wi-Fi MAC queues of a MANET run, sampled every interval in simulated time (the paper's
// queue length: bytes queued, averaged over nodes and time). Compiled at run time by cppyy
// (rttlab/papers/nunes_experts/manet.py).
#include "ns3/wifi-module.h"
namespace rttlab_manet {
using namespace ns3;
inline std::vector<Ptr<WifiMacQueue>> g_queues;
inline double g_sum = 0; inline uint64_t g_count = 0; inline Time g_interval;
inline void Sample() {
    uint64_t total = 0;
    for (auto& q : g_queues) total += q->GetNBytes();
    g_sum += double(total) / g_queues.size(); g_count++;
    Simulator::Schedule(g_interval, &Sample);
}
inline void Watch(NetDeviceContainer devices, double interval) {
    g_queues.clear(); g_sum = 0; g_count = 0; g_interval = Seconds(interval);
    for (uint32_t i = 0; i < devices.GetN(); ++i) {
        Ptr<WifiNetDevice> d = DynamicCast<WifiNetDevice>(devices.Get(i));
        g_queues.push_back(d->GetMac()->GetTxop()->GetWifiMacQueue());
    }
    Simulator::Schedule(g_interval, &Sample);
}
inline double MeanBytes() { return g_count ? g_sum / g_count : 0.0; }
}
