// The counters of a queue (WorkerStats, holding InputStats and CacheStats), of the export
// thread (ExportStats) and of the output plugin (OutputStats), one X(...) line each in the
// format of rowprobe/counter_table.hpp. The flow table's are in rowprobe/cache_counters.hpp.
// The order of the lines is the order of the struct fields, of the JSON keys, of the stderr
// table's columns and (scalars first, then the labelled and nested families) of the metrics.
//
// Thread ownership: constants. Costs: none at run time beyond the code generated from them.
#pragma once

#include "rowprobe/counter_table.hpp"

// clang-format off
#define ROWPROBE_INPUT_COUNTERS(X)                                                                 \
    X(COUNT, received, "received", Sum, Counter, "rowprobe_input_received_total", "",              \
      "Packets the input plugin delivered (input.received).", "", None)                            \
    X(COUNT, kernelDrops, "kernel_drops", Sum, Counter, "rowprobe_input_kernel_drops_total", "",   \
      "Packets the kernel or NIC dropped before rowprobe saw them (input.kernel_drops).", "",      \
      None)                                                                                        \
    X(COUNT, ifaceDrops, "interface_drops", Sum, Counter, "rowprobe_input_interface_drops_total",  \
      "", "Packets the interface dropped (input.interface_drops).", "", None)

#define ROWPROBE_WORKER_COUNTERS(X)                                                                \
    X(COUNT, packets, "packets", Sum, Counter, "rowprobe_packets_total", "",                       \
      "Frames read from the input (packets).", "packets", Delta)                                   \
    X(COUNT, parsed, "parsed", Sum, Counter, "rowprobe_parsed_total", "",                          \
      "Frames that reached the flow table (parsed).", "parsed", Delta)                             \
    X(DERIVED, packets, "", None, Internal, "", "",                                                \
      "Frames per second over the interval, in millions (the stderr table only).", "Mpps", Rate)   \
    X(COUNT, ipBytes, "ip_bytes", Sum, Counter, "rowprobe_ip_bytes_total", "",                     \
      "IP bytes of the parsed packets (ip_bytes).", "", None)                                      \
    X(DERIVED, skipped(), "skipped", None, Counter, "rowprobe_skipped_total", "",                  \
      "Frames that did not reach the flow table (skipped).", "", None)                             \
    X(ANOMALIES, anomalies, "anomalies", Sum, Counter, "rowprobe_anomalies_total", "reason",       \
      "Frames with a named parsing anomaly (anomalies.<reason>).", "", None)                       \
    X(INPUT, input, "input", Fields, Group, "", "",                                                \
      "The input plugin's counters (ROWPROBE_INPUT_COUNTERS).", "", None)                          \
    X(CACHE, cache, "cache", Fields, Group, "", "",                                                \
      "The flow table's counters (ROWPROBE_CACHE_COUNTERS).", "", None)                            \
    X(COUNT, batches, "batches", Sum, Counter, "rowprobe_batches_total", "",                       \
      "Blocks of up to 64 packets processed (batches).", "", None)                                 \
    X(COUNT, busyNs, "busy_ns", Sum, Nanoseconds, "rowprobe_busy_seconds_total", "",               \
      "Time spent parsing and in the flow table (busy_ns / 1e9).", "", None)                       \
    X(DERIVED, nsPerPacket(), "ns_per_packet", None, Gauge, "", "",                                \
      "busy_ns per packet (ns_per_packet).", "ns/pkt", Decimal)                                    \
    X(COUNT, flushNs, "flush_ns", Sum, Nanoseconds, "rowprobe_flush_seconds_total", "",            \
      "Time of the final flush: every cached flow handed to the export thread (flush_ns / 1e9).", \
      "", None)

#define ROWPROBE_EXPORT_COUNTERS(X)                                                                \
    X(COUNT, records, "records", Sum, Counter, "rowprobe_export_records_total", "",                \
      "Records the export thread took off the workers' rings (export.records).", "", None)        \
    X(COUNT, finishNs, "finish_ns", Sum, Nanoseconds, "rowprobe_export_finish_seconds_total", "",  \
      "Time from the end of the workers' final flushes to the output's finish (export.finish_ns " \
      "/ 1e9).", "", None)

#define ROWPROBE_OUTPUT_COUNTERS(X)                                                                \
    X(COUNT, records, "records", Sum, Counter, "rowprobe_output_records_total", "",                \
      "Records the output plugin wrote (output.records).", "", None)                               \
    X(COUNT, dropped, "dropped", Sum, Counter, "rowprobe_output_dropped_total", "",                \
      "Records the output plugin lost, e.g. collector unreachable (output.dropped).", "", None)    \
    X(COUNT, discarded, "discarded", Sum, Counter, "rowprobe_output_discarded_total", "",          \
      "Of the dropped records, those the output's policy discarded with no receiver connected "    \
      "(output.discarded).", "", None)                                                             \
    X(COUNT, bytes, "bytes", Sum, Counter, "rowprobe_output_bytes_total", "",                      \
      "Bytes the output plugin wrote (output.bytes).", "", None)
// clang-format on
