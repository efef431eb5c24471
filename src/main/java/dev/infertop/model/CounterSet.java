package dev.infertop.model;

import java.util.List;

/**
 * A named set of up to {@link #MAX_EVENTS} counter events for one CPU family, with the cache line size that
 * turns refills into bytes. Sets come from config/counters.conf (and the user's); {@code arch} is x86_64,
 * arm64 or any.
 */
public record CounterSet(String name, String arch, int lineBytes, List<CounterEvent> events) {
    /** Events read per CPU (MAX_COUNTER_EVENTS in native/events.h). */
    public static final int MAX_EVENTS = 4;

    public CounterSet {
        events = List.copyOf(events);
        if (events.isEmpty() || events.size() > MAX_EVENTS) {
            throw new IllegalArgumentException("counter set '" + name + "' has " + events.size()
                    + " events: give 1 to " + MAX_EVENTS);
        }
        if (lineBytes <= 0) {
            throw new IllegalArgumentException("counter set '" + name + "': line size must be a positive byte count");
        }
    }

    /** Index of the event playing {@code role}, or -1. */
    public int indexOf(CounterEvent.Role role) {
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i).role() == role) {
                return i;
            }
        }
        return -1;
    }

    public List<String> eventNames() {
        return events.stream().map(CounterEvent::name).toList();
    }
}
