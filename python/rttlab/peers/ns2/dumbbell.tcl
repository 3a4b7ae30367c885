# rttlab's dumbbell in ns-2.35 (rttlab.peers.ns2). The run's data comes first in the script
# (the array `cfg`, the lists `flows` and `tcpvars`, `sinkvars`, `redvars`, written by
# rttlab/peers/ns2/engine.py from the resolved scenario); this file is the code that reads it.
# Every ns-2 default that differs from rttlab's is overridden from the data
# (docs/ns2-comparison.md lists each one).

set ns [new Simulator]

# Seeding: ns-2's MRG32k3a generator (tools/rng.cc) is seeded once with 1 and advanced by
# `seed` substreams, the ns-2 manual's way of making independent replications (ch. 25.1.1);
# RED's drop draws, the error model and the on/off sources all read this default generator.
global defaultRNG
$defaultRNG seed 1
for {set i 0} {$i < $cfg(seed)} {incr i} { $defaultRNG next-substream }

# Queue defaults, set class-wide before the links that create the queues.
foreach {k v} $redvars { Queue/RED set $k $v }

set r0 [$ns node]
set r1 [$ns node]
$ns duplex-link $r0 $r1 $cfg(bn_bw) $cfg(bn_delay) $cfg(bn_queue)
$ns queue-limit $r0 $r1 $cfg(bn_limit)
$ns queue-limit $r1 $r0 $cfg(bn_limit)

# The bottleneck's data direction (r0 -> r1): arrivals, departures and overflow drops in one
# monitor; RED's early drops reach their own target (red.cc: de_drop_, the "early-drop-target"),
# counted by a second monitor, so the two causes stay apart as in rttlab.
set qmon [$ns monitor-queue $r0 $r1 0]
set edmon [new QueueMonitor/ED]
if {$cfg(bn_queue) == "RED"} {
    set edsnoop [new SnoopQueue/EDrop]
    $edsnoop set-monitor $edmon
    $edsnoop target [$ns set nullAgent_]
    [[$ns link $r0 $r1] queue] early-drop-target $edsnoop
}

# Error models on the bottleneck, inserted after the link's delay (ns-link.tcl insert-linkloss):
# a corrupted packet has used the link, as in rttlab. Their drops are counted by their own monitor.
set emon [new QueueMonitor]
foreach {from to} $cfg(err_dirs) {
    set em [new ErrorModel]
    $em unit $cfg(err_unit)
    $em set rate_ $cfg(err_rate)
    $ns link-lossmodel $em [set $from] [set $to]
    set esnoop [new SnoopQueue/Drop]
    $esnoop set-monitor $emon
    $esnoop target [$ns set nullAgent_]
    $em drop-target $esnoop
}

foreach {k v} $tcpvars { Agent/TCP set $k $v }
foreach {k v} $classvars { $cfg(tcp) set $k $v }
foreach {k v} $sinkvars { $cfg(sink) set $k $v }

set i 0
foreach flow $flows {
    lassign $flow group start app
    set s($i) [$ns node]
    set d($i) [$ns node]
    $ns duplex-link $s($i) $r0 $cfg(acc_bw) $cfg(acc_delay) DropTail
    $ns queue-limit $s($i) $r0 $cfg(acc_limit)
    $ns queue-limit $r0 $s($i) $cfg(acc_limit)
    $ns duplex-link $r1 $d($i) $cfg(racc_bw) $cfg(racc_delay) DropTail
    $ns queue-limit $r1 $d($i) $cfg(racc_limit)
    $ns queue-limit $d($i) $r1 $cfg(racc_limit)
    set tcp($i) [new $cfg(tcp)]
    $tcp($i) set fid_ $i
    set sink($i) [new $cfg(sink)]
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    switch [lindex $app 0] {
        bulk {
            set src($i) [new Application/FTP]
            $src($i) attach-agent $tcp($i)
            if {[lindex $app 1] == "inf"} {
                $ns at $start "$src($i) start"
            } else {
                $ns at $start "$src($i) send [lindex $app 1]"
            }
        }
        onoff {
            # Exponential on/off (Application/Traffic/Exponential): on and off periods are
            # exponential with the given means, packets of packetSize_ at rate_ while on.
            set src($i) [new Application/Traffic/Exponential]
            $src($i) set burst_time_ [lindex $app 1]
            $src($i) set idle_time_ [lindex $app 2]
            $src($i) set rate_ [lindex $app 3]
            $src($i) set packetSize_ $cfg(mss)
            $src($i) attach-agent $tcp($i)
            $ns at $start "$src($i) start"
        }
    }
    incr i
}

# The report: one line per flow and one for the bottleneck, read by engine.py.
proc finish {} {
    global tcp sink flows qmon edmon emon cfg
    for {set i 0} {$i < [llength $flows]} {incr i} {
        puts [format "flow %d %s %s %s %s %s %s %s" $i \
            [$sink($i) set bytes_] [$tcp($i) set ndatabytes_] [$tcp($i) set nrexmitpack_] \
            [$tcp($i) set nrexmit_] [$tcp($i) set necnresponses_] [$tcp($i) set cwnd_] \
            [$tcp($i) set ack_]]
    }
    puts [format "bottleneck %s %s %s %s %s %s" [$qmon set parrivals_] [$qmon set pdepartures_] \
        [$qmon set bdepartures_] [$qmon set pdrops_] [$edmon set epdrops_] [$emon set pdrops_]]
    exit 0
}
$ns at $cfg(duration) "finish"
$ns run
