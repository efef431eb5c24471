package dev.infertop.export;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Checks a trace against the Chrome Trace Event format (the "JSON Object Format" of Google's Trace Event
 * Format document): a traceEvents array whose events each have name, ph, pid, tid and a numeric ts; complete
 * events ("X") a dur of 0 or more; counters ("C") numeric args; instants ("i") a scope s of g, p or t;
 * metadata ("M") args.name. Returns the problems found, empty when it conforms.
 */
public final class ChromeTraceValidator {
    private static final Set<String> PHASES = Set.of("X", "B", "E", "i", "I", "C", "M");

    private ChromeTraceValidator() {}

    public static List<String> problems(JsonNode trace) {
        List<String> problems = new ArrayList<>();
        JsonNode events = trace.path("traceEvents");
        if (!events.isArray()) {
            problems.add("no traceEvents array");
            return problems;
        }
        int index = 0;
        for (JsonNode event : events) {
            String where = "event " + index++ + " " + event;
            String ph = event.path("ph").asText("");
            if (!PHASES.contains(ph)) {
                problems.add(where + ": phase '" + ph + "' unknown");
                continue;
            }
            if (!event.path("name").isTextual()) {
                problems.add(where + ": no name");
            }
            if (!event.path("pid").isInt() || !event.path("tid").isInt()) {
                problems.add(where + ": pid and tid must be integers");
            }
            if (!event.path("ts").isNumber() || event.path("ts").asDouble() < 0) {
                problems.add(where + ": ts must be a number >= 0");
            }
            switch (ph) {
                case "X" -> {
                    if (!event.path("dur").isNumber() || event.path("dur").asDouble() < 0) {
                        problems.add(where + ": complete event without dur >= 0");
                    }
                }
                case "C" -> {
                    if (!event.path("args").isObject() || event.path("args").isEmpty()) {
                        problems.add(where + ": counter without args");
                    }
                    event.path("args").forEach(value -> {
                        if (!value.isNumber()) {
                            problems.add(where + ": counter value not a number");
                        }
                    });
                }
                case "i", "I" -> {
                    if (!Set.of("g", "p", "t").contains(event.path("s").asText("t"))) {
                        problems.add(where + ": instant scope must be g, p or t");
                    }
                }
                case "M" -> {
                    if (!event.path("args").path("name").isTextual()) {
                        problems.add(where + ": metadata without args.name");
                    }
                }
                default -> { }
            }
        }
        return problems;
    }
}
