# rttlab's scenario in ns-2.35 (rttlab.peers.ns2). The run's data comes first in the script (the
# array `cfg` and the lists `links`, `flows`, `tcpvars`, `classvars`, `sinkvars`, written by
# rttlab/peers/ns2/engine.py from the resolved scenario); this file is the code that reads it.
# A dumbbell arrives as a graph: its routers, senders and receivers are nodes, its bottleneck
# and access links are links. Every ns-2 default that differs from rttlab's is set from the data
# (docs/ns2-comparison.md lists each one).

set ns [new Simulator]

# Seeding: ns-2's MRG32k3a generator (tools/rng.cc) is seeded once with 1 and advanced by
# `seed` substreams, the ns-2 manual's way of making independent replications (ch. 25.1.1);
# RED's drop draws, the error models, the on/off sources and each TCP agent's clock phase
# (tcp.cc reset: boot_time_) all read this default generator.
global defaultRNG
$defaultRNG seed 1
for {set i 0} {$i < $cfg(seed)} {incr i} { $defaultRNG next-substream }

for {set i 0} {$i < $cfg(nodes)} {incr i} { set n($i) [$ns node] }

# Links: {a b bandwidth delay queue limit redvars}, forward a -> b, a queue of the kind each way.
# A RED queue's variables are set on each queue object (bound to red.cc's edp_; read when the
# simulation starts, REDQueue::reset).
foreach link $links {
    lassign $link a b bw delay kind limit red
    $ns duplex-link $n($a) $n($b) $bw $delay $kind
    foreach {from to} [list $a $b $b $a] {
        $ns queue-limit $n($from) $n($to) $limit
        foreach {k v} $red { [[$ns link $n($from) $n($to)] queue] set $k $v }
    }
}

# The bottleneck's data direction (cfg(bn_from) -> cfg(bn_to)): arrivals, departures and
# overflow drops in one monitor; RED's early drops reach their own target (red.cc: de_drop_, the
# "early-drop-target"), counted by a second monitor, so the two causes stay apart as in rttlab.
set bn_from $n($cfg(bn_from))
set bn_to $n($cfg(bn_to))
set qmon [$ns monitor-queue $bn_from $bn_to 0]
set edmon [new QueueMonitor/ED]
set bnq [[$ns link $bn_from $bn_to] queue]
if {[$bnq info class] == "Queue/RED"} {
    set edsnoop [new SnoopQueue/EDrop]
    $edsnoop set-monitor $edmon
    $edsnoop target [$ns set nullAgent_]
    $bnq early-drop-target $edsnoop
}

# The queue trace (when asked for): the bottleneck's queue every cfg(qsample) seconds, as
# rttlab samples it (simulation.queue_sample_interval): packets and bytes in the queue (the
# monitor's pkts_ and size_, the packet being sent not counted) and RED's average (ave_).
if {$cfg(qsample) > 0} {
    set qf [open queue.txt w]
    set qk 0
    proc qsample {} {
        global ns qmon bnq cfg qf qk
        set ave [expr {[$bnq info class] == "Queue/RED" ? [$bnq set ave_] : "nan"}]
        puts $qf "[$ns now] [$qmon set pkts_] [$qmon set size_] $ave"
        incr qk
        set next [expr {$qk * $cfg(qsample)}]
        if {$next < $cfg(duration)} { $ns at $next "qsample" }
    }
    $ns at 0.0 "qsample"
}

# Error models on the bottleneck, inserted after the link's delay (ns-link.tcl insert-linkloss):
# a corrupted packet has used the link, as in rttlab. Their drops are counted by their own monitor.
set emon [new QueueMonitor]
foreach {from to} $cfg(err_dirs) {
    set em [new ErrorModel]
    $em unit $cfg(err_unit)
    $em set rate_ $cfg(err_rate)
    $ns link-lossmodel $em $n($from) $n($to)
    set esnoop [new SnoopQueue/Drop]
    $esnoop set-monitor $emon
    $esnoop target [$ns set nullAgent_]
    $em drop-target $esnoop
}

foreach {k v} $tcpvars { Agent/TCP set $k $v }
foreach {k v} $classvars { $cfg(tcp) set $k $v }
foreach {k v} $sinkvars { $cfg(sink) set $k $v }

# Flows: {group start app src dst {window ssthresh}}; a start {uniform a b} is drawn here from the seed's stream.
set i 0
foreach flow $flows {
    lassign $flow group start app src dst windows
    if {[lindex $start 0] == "uniform"} {
        set rv [new RandomVariable/Uniform]
        $rv set min_ [lindex $start 1]
        $rv set max_ [lindex $start 2]
        set start [$rv value]
    }
    set began($i) $start
    set tcp($i) [new $cfg(tcp)]
    $tcp($i) set fid_ $i
    lassign $windows window ssthresh
    $tcp($i) set window_ $window
    # An initial ssthresh other than window_: set at time 0, after $ns run has reset the agent
    # (tcp.cc reset sets ssthresh_ = window_) and before any source starts (same-time events
    # run in the order they were scheduled).
    if {$ssthresh > 0} { $ns at 0.0 "$tcp($i) set ssthresh_ $ssthresh" }
    set sink($i) [new $cfg(sink)]
    $ns attach-agent $n($src) $tcp($i)
    $ns attach-agent $n($dst) $sink($i)
    $ns connect $tcp($i) $sink($i)
    switch [lindex $app 0] {
        bulk {
            set source($i) [new Application/FTP]
            $source($i) attach-agent $tcp($i)
            if {[lindex $app 1] == "inf"} {
                $ns at $start "$source($i) start"
            } else {
                $ns at $start "$source($i) send [lindex $app 1]"
            }
        }
        onoff {
            # Exponential on/off (Application/Traffic/Exponential): on and off periods are
            # exponential with the given means, packets of packetSize_ at rate_ while on.
            set source($i) [new Application/Traffic/Exponential]
            $source($i) set burst_time_ [lindex $app 1]
            $source($i) set idle_time_ [lindex $app 2]
            $source($i) set rate_ [lindex $app 3]
            $source($i) set packetSize_ $cfg(mss)
            $source($i) attach-agent $tcp($i)
            $ns at $start "$source($i) start"
        }
    }
    incr i
}

# Byte counters are C ints in ns-2 (the sink's bytes_, the agent's ndatabytes_, the monitor's
# bdepartures_): they wrap at 2^31, which 100 Mb/s reaches in 172 s. Each is read every second
# and its change, taken modulo 2^32, added to a Tcl (arbitrary-precision) total.
proc tally {} {
    global ns tcp sink flows qmon total last
    set now [list]
    for {set i 0} {$i < [llength $flows]} {incr i} {
        lappend now sink$i [$sink($i) set bytes_] sent$i [$tcp($i) set ndatabytes_]
    }
    lappend now bdep [$qmon set bdepartures_]
    foreach {k v} $now {
        set total($k) [expr {$total($k) + (($v - $last($k)) % 4294967296)}]
        set last($k) $v
    }
}
proc every_second {} {
    global ns
    tally
    $ns at [expr {[$ns now] + 1.0}] "every_second"
}
set total(bdep) 0
set last(bdep) 0
for {set i 0} {$i < [llength $flows]} {incr i} {
    foreach k [list sink$i sent$i] { set total($k) 0; set last($k) 0 }
}
$ns at 1.0 "every_second"

# The report: one line per flow and one for the bottleneck, read by engine.py.
proc finish {} {
    global tcp sink flows qmon edmon emon began total qf
    tally
    if {[info exists qf]} { close $qf }
    for {set i 0} {$i < [llength $flows]} {incr i} {
        puts [format "flow %d %s %s %s %s %s %s %s %.9f" $i \
            $total(sink$i) $total(sent$i) [$tcp($i) set nrexmitpack_] \
            [$tcp($i) set nrexmit_] [$tcp($i) set necnresponses_] [$tcp($i) set cwnd_] \
            [$tcp($i) set ack_] $began($i)]
    }
    puts [format "bottleneck %s %s %s %s %s %s" [$qmon set parrivals_] [$qmon set pdepartures_] \
        $total(bdep) [$qmon set pdrops_] [$edmon set epdrops_] [$emon set pdrops_]]
    exit 0
}
$ns at $cfg(duration) "finish"
$ns run
