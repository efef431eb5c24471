package dev.infertop.export;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.MoeTimeline;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** An MoE ids read drawn as a Chrome Trace instant event, checked character by character. */
class MoeTraceEventsTest {
    @Test
    void anIdsReadIsAThreadInstantWithLayerTokensAndPerExpertCounts() throws Exception {
        FlightRecorder recorder = new FlightRecorder(16, 1_000_000_000L);
        MoeTimeline timeline = new MoeTimeline(recorder);
        recorder.record(FlightRecorder.Kind.TOKEN, 10, 5_000_000, 7_000_000, recorder.label("prefill"), 0, 4);
        timeline.activation(11, 5_250_000, 3, 4, 2, new long[] {3, 1, 0, 0, 0, 1, 0, 2});
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ChromeTraceWriter.write(out, recorder.copyWindow(8_000_000), Map.of(), 99, "llama-bench");
        String json = out.toString();
        List<String> events = List.of(json.substring(json.indexOf("\"traceEvents\":[") + 15, json.lastIndexOf(']'))
                .split(",(?=\\{\"name)"));
        assertEquals("{\"name\":\"moe experts\",\"cat\":\"moe\",\"ph\":\"i\",\"s\":\"t\",\"ts\":250.0,\"pid\":99,"
                + "\"tid\":11,\"args\":{\"layer\":3,\"tokens\":4,\"experts_used\":2,\"experts_active\":4,"
                + "\"counts\":{\"0\":3,\"1\":1,\"5\":1,\"7\":2},\"counts_complete\":true}}", events.get(4));
        assertEquals(List.of(), ChromeTraceValidator.problems(new ObjectMapper().readTree(json)));
    }
}
