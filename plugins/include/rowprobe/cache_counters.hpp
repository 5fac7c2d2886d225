// The flow table's counters: every CacheStats field, how queues merge it, where it appears
// (the --stats-json key under "cache", the Prometheus metric, the stderr table's column) and
// what it means. One X(...) line per counter in the format of rowprobe/counter_table.hpp, which
// says what each column means and what is generated from the tables. The worker, input, export
// and output counters are in rowprobe/stats_counters.hpp.
//
// Thread ownership: constants. Costs: none at run time beyond the code generated from it.
#pragma once

#include "rowprobe/counter_table.hpp"

// clang-format off
#define ROWPROBE_CACHE_COUNTERS(X)                                                                 \
    X(COUNT, hits, "hits", Sum, Counter, "rowprobe_cache_hits_total", "",                          \
      "Packets that found their flow (cache.hits).", "hits", Delta)                                \
    X(COUNT, missFree, "miss_free", Sum, Counter, "rowprobe_cache_misses_total", "kind=\"free\"",  \
      "New flows by where they were placed: free slot, evicting a live flow, or an expired "       \
      "flow's slot (cache.miss_free, miss_evict, miss_reclaim).", "miss-free", Delta)              \
    X(COUNT, missEvict, "miss_evict", Sum, Counter, "rowprobe_cache_misses_total",                 \
      "kind=\"evict\"", "New flows that evicted a live flow (cache.miss_evict).",                  \
      "miss-evict", Delta)                                                                         \
    X(COUNT, missReclaim, "miss_reclaim", Sum, Counter, "rowprobe_cache_misses_total",             \
      "kind=\"reclaim\"", "New flows that took the slot of an expired flow (cache.miss_reclaim).", \
      "", None)                                                                                    \
    X(COUNT, flowsCreated, "flows_created", Sum, Counter, "rowprobe_cache_flows_created_total", "", \
      "Flows created (cache.flows_created).", "", None)                                            \
    X(REASONS, exported, "exported", Sum, Counter, "rowprobe_flows_exported_total", "reason",      \
      "Flows exported by end reason (cache.exported.<reason>).", "", None)                         \
    X(DERIVED, exportedTotal(), "exported_total", None, Counter, "", "",                           \
      "Flows exported, all end reasons (cache.exported_total).", "exported", Delta)                \
    X(COUNT, exportedBySweep, "exported_by_sweep", Sum, Counter,                                   \
      "rowprobe_cache_exported_by_sweep_total", "",                                                \
      "Flows exported by the incremental expiry sweep (cache.exported_by_sweep).", "", None)       \
    X(COUNT, exportedAtEnd, "exported_at_end", Sum, Counter, "rowprobe_cache_exported_at_end_total", \
      "", "Flows exported by the final flush (cache.exported_at_end).", "", None)                  \
    X(COUNT, positionSum, "", Sum, Internal, "", "",                                               \
      "Sum of the 1-based hit positions (for the mean).", "", None)                                \
    X(COUNT, positionSqSum, "", Sum, Internal, "", "",                                             \
      "Sum of the squared 1-based hit positions (for the variance).", "", None)                    \
    X(DERIVED, hitPositionMean(), "hit_position_mean", None, Gauge,                                \
      "rowprobe_cache_hit_position_mean", "",                                                      \
      "Mean 1-based position of the hit flow in its row's policy order (cache.hit_position_mean).", \
      "", None)                                                                                    \
    X(DERIVED, hitPositionVariance(), "hit_position_variance", None, Gauge,                        \
      "rowprobe_cache_hit_position_variance", "",                                                  \
      "Variance of the hit position (cache.hit_position_variance).", "", None)                     \
    X(COUNT, flowsInCache, "flows_in_cache", Sum, Gauge, "rowprobe_cache_flows", "",               \
      "Flows in the cache (cache.flows_in_cache).", "in-cache", Value)                             \
    X(COUNT, capacity, "capacity", Sum, Gauge, "rowprobe_cache_capacity", "",                      \
      "Flow records the cache can hold (cache.capacity).", "", None)                               \
    X(DERIVED, loadFactor(), "load_factor", None, Gauge, "rowprobe_cache_load_factor", "",         \
      "Flows in the cache / capacity (cache.load_factor).", "load", Percent)                       \
    X(COUNT, fragmentsFilled, "fragments_filled", Sum, Counter,                                    \
      "rowprobe_cache_fragments_filled_total", "",                                                 \
      "Non-first fragments that got their ports from the fragment cache (cache.fragments_filled).", \
      "", None)                                                                                    \
    X(COUNT, fragmentsNoPorts, "fragments_no_ports", Sum, Counter,                                 \
      "rowprobe_cache_fragments_no_ports_total", "",                                               \
      "Non-first fragments without a known first fragment (cache.fragments_no_ports).", "", None)  \
    X(COUNT, floodIntervals, "flood.intervals", Max, Counter, "rowprobe_flood_intervals_total", "", \
      "Intervals the flood detector evaluated (cache.flood.intervals).", "", None)                 \
    X(COUNT, floodAlarms, "flood.alarms", Sum, Counter, "rowprobe_flood_alarms_total", "",         \
      "Floods detected (cache.flood.alarms).", "", None)                                           \
    X(COUNT, floodActive, "flood.active", Sum, Gauge, "rowprobe_flood_active", "",                 \
      "1 while a flood is detected (cache.flood.active; the total: queues in a flood).", "", None) \
    X(DERIVED, floodLastAlarm, "flood.last_alarm", None, Iso, "", "",                              \
      "Packet time of the latest flood alarm, ISO 8601 (cache.flood.last_alarm).", "", None)       \
    X(COUNT, floodLastAlarm, "flood.last_alarm_ns", Latest, Nanoseconds,                           \
      "rowprobe_flood_last_alarm_timestamp_seconds", "",                                           \
      "Packet time of the latest flood alarm, 0 if none (cache.flood.last_alarm_ns / 1e9).",       \
      "", None)                                                                                    \
    X(COUNT, floodLastCount, "flood.last_count", Latest, Gauge, "rowprobe_flood_last_alarm_flows", \
      "", "New flows in the interval that raised the latest alarm (cache.flood.last_count).",      \
      "", None)                                                                                    \
    X(COUNT, floodBaseline, "flood.baseline", Latest, Gauge, "rowprobe_flood_baseline", "",        \
      "Expected new flows per interval at the latest alarm (cache.flood.baseline).", "", None)     \
    X(COUNT, admissionDeferred, "admission_deferred", Sum, Counter,                                \
      "rowprobe_admission_deferred_total", "",                                                     \
      "First packets of new flows not admitted in flood mode (cache.admission_deferred).",         \
      "", None)                                                                                    \
    X(COUNT, admissionEvicted, "admission_evicted", Sum, Counter,                                  \
      "rowprobe_admission_evicted_total", "",                                                      \
      "Flows admitted during a flood evicted before others (cache.admission_evicted).", "", None)  \
    X(COUNT, extPoolExhausted, "ext_pool_exhausted", Sum, Counter,                                 \
      "rowprobe_plugin_ext_pool_exhausted_total", "",                                              \
      "Process-plugin records refused by a full per-worker pool; the flow was exported without "   \
      "them (cache.ext_pool_exhausted).", "", None)                                                \
    X(COUNT, pluginDataDropped, "plugin_data_dropped", Sum, Counter,                               \
      "rowprobe_plugin_data_dropped_total", "",                                                    \
      "Process-plugin instances beyond the per-record limit, not exported "                        \
      "(cache.plugin_data_dropped).", "", None)                                                    \
    X(COUNT, pluginFlushes, "plugin_flushes", Sum, Counter, "rowprobe_plugin_flushes_total", "",   \
      "Flows ended by a process plugin: flush or flush-reinsert (cache.plugin_flushes).",          \
      "", None)                                                                                    \
    X(COUNT, pluginHeapAllocations, "plugin_heap.allocations", Sum, Counter,                       \
      "rowprobe_plugin_heap_allocations_total", "",                                                \
      "Heap allocations made by process plugins' libraries (nDPI) for flows "                      \
      "(cache.plugin_heap.allocations).", "", None)                                                \
    X(COUNT, pluginHeapFrees, "plugin_heap.frees", Sum, Counter, "rowprobe_plugin_heap_frees_total", \
      "", "Of those, freed (cache.plugin_heap.frees).", "", None)                                  \
    X(COUNT, pluginHeapAllocatedBytes, "plugin_heap.allocated_bytes", Sum, Counter,                \
      "rowprobe_plugin_heap_allocated_bytes_total", "",                                            \
      "Bytes of those allocations (cache.plugin_heap.allocated_bytes).", "", None)                 \
    X(COUNT, pluginHeapFreedBytes, "plugin_heap.freed_bytes", Sum, Counter,                        \
      "rowprobe_plugin_heap_freed_bytes_total", "",                                                \
      "Bytes of those frees (cache.plugin_heap.freed_bytes).", "", None)                           \
    X(COUNT, pluginHeapRetainedBytes, "plugin_heap.retained_bytes", Sum, Counter,                  \
      "rowprobe_plugin_heap_retained_bytes_total", "",                                             \
      "Bytes allocated while working on flows that the library keeps after their export (nDPI's "  \
      "LRU caches, made on first use), counted in module_bytes (cache.plugin_heap.retained_bytes).", \
      "", None)                                                                                    \
    X(COUNT, pluginHeapRetainedAllocations, "", Sum, Internal, "", "",                             \
      "Allocations among retained_bytes (for live_allocations).", "", None)                        \
    X(DERIVED, pluginHeapLiveBytes(), "plugin_heap.live_bytes", None, Gauge,                       \
      "rowprobe_plugin_heap_live_bytes", "",                                                       \
      "Bytes process plugins' libraries hold for live flows; 0 once every flow is exported "       \
      "(cache.plugin_heap.live_bytes).", "", None)                                                 \
    X(DERIVED, pluginHeapLiveAllocations(), "plugin_heap.live_allocations", None, Gauge,           \
      "rowprobe_plugin_heap_live_allocations", "",                                                 \
      "Allocations process plugins' libraries hold for live flows "                                \
      "(cache.plugin_heap.live_allocations).", "", None)                                           \
    X(COUNT, pluginModuleBytes, "plugin_heap.module_bytes", Sum, Gauge,                            \
      "rowprobe_plugin_heap_module_bytes", "",                                                     \
      "Bytes held by process plugins' per-worker library state (nDPI detection modules and "       \
      "their caches), freed at exit (cache.plugin_heap.module_bytes).", "", None)
// clang-format on
