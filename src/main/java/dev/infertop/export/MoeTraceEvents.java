package dev.infertop.export;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.MoeTimeline;

import java.io.IOException;

/**
 * An MoE ids read in trace.json: a thread-scoped instant event ({@code "ph":"i","s":"t"}) of category moe named
 * "moe experts", with args {@code layer}, {@code tokens} (the batch's tokens), {@code experts_used} (per token),
 * {@code experts_active} (experts that got tokens) and {@code counts} (expert id → tokens of the batch routed to
 * it, lowest ids first, at most {@value MoeTimeline#MAX_EXPERTS_PER_RECORD}; {@code counts_complete} false when
 * that bound cut the list).
 */
final class MoeTraceEvents {
    static final String CATEGORY = "moe";

    private MoeTraceEvents() {}

    static void activation(JsonGenerator json, int pid, FlightRecorder.Slice slice, double tsMicros,
                           MoeTimeline.Activation activation) throws IOException {
        json.writeStartObject();
        json.writeStringField("name", MoeTimeline.NAME);
        json.writeStringField("cat", CATEGORY);
        json.writeStringField("ph", "i");
        json.writeStringField("s", "t");
        json.writeNumberField("ts", tsMicros);
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", slice.tid());
        json.writeObjectFieldStart("args");
        json.writeNumberField("layer", activation.layer());
        json.writeNumberField("tokens", activation.tokens());
        json.writeNumberField("experts_used", activation.expertsUsed());
        json.writeNumberField("experts_active", activation.expertsActive());
        json.writeObjectFieldStart("counts");
        for (int k = 0; k < activation.experts().length; k++) {
            json.writeNumberField(Integer.toString(activation.experts()[k]), activation.counts()[k]);
        }
        json.writeEndObject();
        json.writeBooleanField("counts_complete", activation.complete());
        json.writeEndObject();
        json.writeEndObject();
    }
}
