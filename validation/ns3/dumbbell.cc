// The ns-3 side of rttlab's simulator validation (issue 5): the dumbbell of
// examples/scenarios/dumbbell-n{1,10,50}-{droptail,red,red-ecn}.toml, built with ns-3 3.44 from
// the PyPI wheel `ns3` (headers and libraries it ships; see build.sh). Prints one JSON object.
//
// Every ns-3 default that differs from what rttlab's TCP does is set explicitly here and named on
// the command line, so a comparison states what was matched (docs/validation.md).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-layout-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <vector>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t flows = 10;
    std::string queue = "droptail"; // droptail | red | red-ecn
    double duration = 60.0;
    uint32_t segment = 1448;
    uint32_t queuePackets = 100;
    double redMinTh = 25;
    double redMaxTh = 75;
    double redQw = 0.002;
    double redLInterm = 50; // max_p = 1/LInterm
    bool redGentle = false;
    bool sack = false;
    bool timestamps = false;
    uint32_t delAckCount = 1;
    uint32_t initialCwnd = 10;
    double minRto = 1.0;
    std::string recovery = "classic"; // classic | prr
    uint32_t seed = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of NewReno bulk flows", flows);
    cmd.AddValue("queue", "bottleneck queue: droptail | red | red-ecn", queue);
    cmd.AddValue("duration", "simulated seconds (goodput = bytes delivered / duration)", duration);
    cmd.AddValue("segment", "TCP segment size (bytes)", segment);
    cmd.AddValue("queuePackets", "bottleneck queue capacity (packets)", queuePackets);
    cmd.AddValue("redMinTh", "RED min threshold (packets)", redMinTh);
    cmd.AddValue("redMaxTh", "RED max threshold (packets)", redMaxTh);
    cmd.AddValue("redQw", "RED EWMA weight", redQw);
    cmd.AddValue("redLInterm", "RED 1/max_p", redLInterm);
    cmd.AddValue("redGentle", "gentle RED", redGentle);
    cmd.AddValue("sack", "TCP SACK (ns-3 default: on)", sack);
    cmd.AddValue("timestamps", "TCP timestamps (ns-3 default: on)", timestamps);
    cmd.AddValue("delAckCount", "segments per delayed ACK (ns-3 default: 2)", delAckCount);
    cmd.AddValue("initialCwnd", "initial window, segments", initialCwnd);
    cmd.AddValue("minRto", "minimum RTO, seconds (ns-3 default 1 s)", minRto);
    cmd.AddValue("recovery", "loss recovery: classic (RFC 6582) | prr (ns-3 default)", recovery);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    // Large buffers: the window is limited by congestion control, not by 128 KiB socket buffers.
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       EnumValue(queue == "red-ecn" ? TcpSocketState::On : TcpSocketState::Off));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    access.SetChannelAttribute("Delay", StringValue("1ms"));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("20ms"));
    // One packet in the device: the queue disc below is the bottleneck queue.
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    PointToPointDumbbellHelper dumbbell(flows, access, flows, access, bottleneck);
    InternetStackHelper stack;
    dumbbell.InstallStack(stack);

    TrafficControlHelper tch;
    if (queue == "droptail")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(std::to_string(queuePackets) + "p")));
    }
    else
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(std::to_string(queuePackets) + "p")),
                             "MinTh", DoubleValue(redMinTh),
                             "MaxTh", DoubleValue(redMaxTh),
                             "QW", DoubleValue(redQw),
                             "LInterm", DoubleValue(redLInterm),
                             "Gentle", BooleanValue(redGentle),
                             "UseEcn", BooleanValue(queue == "red-ecn"),
                             "MeanPktSize", UintegerValue(segment + 52),
                             "LinkBandwidth", DataRateValue(DataRate("10Mbps")),
                             "LinkDelay", TimeValue(MilliSeconds(20)));
    }
    NetDeviceContainer core;
    core.Add(dumbbell.GetLeft()->GetDevice(0));
    core.Add(dumbbell.GetRight()->GetDevice(0));
    // Installed before addresses are assigned, which would otherwise add pfifo_fast.
    QueueDiscContainer qdiscs = tch.Install(core);

    dumbbell.AssignIpv4Addresses(Ipv4AddressHelper("10.1.1.0", "255.255.255.0"),
                                 Ipv4AddressHelper("10.2.1.0", "255.255.255.0"),
                                 Ipv4AddressHelper("10.3.1.0", "255.255.255.0"));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5000;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < flows; ++i)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(dumbbell.GetRight(i));
        s.Start(Seconds(0.0));
        sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dumbbell.GetRightIpv4Address(i), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(segment));
        ApplicationContainer a = bulk.Install(dumbbell.GetLeft(i));
        a.Start(Seconds(0.1 + 0.01 * i));
    }

    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    QueueDisc::Stats st = qdiscs.Get(0)->GetStats();
    std::printf("{\"simulator\": \"ns-3.44\", \"flows\": %u, \"queue\": \"%s\", \"duration_s\": %.3f, ",
                flows, queue.c_str(), duration);
    std::printf("\"queue_drops\": %u, \"queue_marks\": %u, \"goodput_bps\": [",
                st.nTotalDroppedPackets, st.nTotalMarkedPackets);
    for (uint32_t i = 0; i < flows; ++i)
    {
        std::printf("%s%.1f", i ? ", " : "", sinks[i]->GetTotalRx() * 8.0 / duration);
    }
    std::printf("]}\n");
    Simulator::Destroy();
    return 0;
}
