package dev.infertop.export;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.history.FlightRecorder.Kind;
import dev.infertop.history.FlightRecorder;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every record kind drawn on a hand-made window, checked event by event. */
class ChromeTraceWriterTest {
    private static final long T0 = 5_000_000_000L;

    private static String write(FlightRecorder recorder, long nowNs) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ChromeTraceWriter.write(out, recorder.copyWindow(nowNs), Map.of(3, "ffn_up-0"), 99, "llama-cli",
                Map.of(10, "llama-cli"));
        return out.toString();
    }

    @Test
    void drawsEachKindAsItsTrackType() throws Exception {
        FlightRecorder recorder = new FlightRecorder(16, 1_000_000_000L);
        int decode = recorder.label("decode");
        int graph = recorder.label("CPU graph");
        int mulMat = recorder.label("MUL_MAT");
        int running = recorder.label("running");
        int l3 = recorder.label("L3 MB/s");
        int expert = recorder.label("expert 5");
        recorder.record(Kind.TOKEN, 10, T0, T0 + 2_000_000, decode, 0, 1);
        recorder.record(Kind.GRAPH, 10, T0 + 100_000, T0 + 1_900_000, graph, 0, 6);
        recorder.record(Kind.OP, 11, T0 + 100_000, T0 + 1_500_000, mulMat, 3, 4096);
        recorder.record(Kind.WAIT, 11, T0 + 1_500_000, T0 + 1_600_000, mulMat, 3, 0);
        recorder.record(Kind.THREAD_STATE, 11, T0 + 1_600_000, T0 + 1_700_000, running, -1, 0);
        int runnable = recorder.label("off-CPU (runnable)");
        int culprit = recorder.label("stress-ng");
        recorder.record(Kind.THREAD_STATE, 11, T0 + 1_700_000, T0 + 1_800_000, runnable, culprit,
                (4242L << 32) | 75_000);
        recorder.counter(l3, T0 + 1_000_000, 1234.5);
        recorder.record(Kind.INSTANT, 11, T0 + 1_200_000, T0 + 1_200_000, expert, -1, 5);
        String json = write(recorder, T0 + 3_000_000);
        String events = json.substring(json.indexOf("\"traceEvents\":[") + 15, json.lastIndexOf(']'));
        assertEquals(List.of(
                "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":99,\"tid\":99,\"args\":{\"name\":\"llama-cli\"}}",
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":99,\"tid\":10,\"args\":{\"name\":\"llama-cli 10\"}}",
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":99,\"tid\":11,\"args\":{\"name\":\"thread 11\"}}",
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":99,\"tid\":1073741835,\"args\":{\"name\":\"thread 11 states\"}}",
                "{\"name\":\"decode n=1\",\"cat\":\"token\",\"ph\":\"X\",\"ts\":0.0,\"dur\":2000.0,\"pid\":99,\"tid\":10,\"args\":{\"n_tokens\":\"1\"}}",
                "{\"name\":\"CPU graph\",\"cat\":\"graph\",\"ph\":\"X\",\"ts\":100.0,\"dur\":1800.0,\"pid\":99,\"tid\":10,\"args\":{\"nodes\":\"6\"}}",
                "{\"name\":\"MUL_MAT\",\"cat\":\"op\",\"ph\":\"X\",\"ts\":100.0,\"dur\":1400.0,\"pid\":99,\"tid\":11,\"args\":{\"tensor\":\"ffn_up-0\",\"flops_est\":4096}}",
                "{\"name\":\"barrier wait\",\"cat\":\"wait\",\"ph\":\"X\",\"ts\":1500.0,\"dur\":100.0,\"pid\":99,\"tid\":11,\"args\":{\"after\":\"MUL_MAT\"}}",
                "{\"name\":\"running\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":1600.0,\"dur\":100.0,\"pid\":99,\"tid\":1073741835}",
                "{\"name\":\"off-CPU (runnable)\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":1700.0,\"dur\":100.0,\"pid\":99,\"tid\":1073741835,\"args\":{\"interferer\":\"stress-ng\",\"interferer_pid\":4242,\"interferer_ms\":0.075}}",
                "{\"name\":\"L3 MB/s\",\"ph\":\"C\",\"ts\":1000.0,\"pid\":99,\"tid\":0,\"args\":{\"value\":1234.5}}",
                "{\"name\":\"expert 5\",\"cat\":\"instant\",\"ph\":\"i\",\"s\":\"t\",\"ts\":1200.0,\"pid\":99,\"tid\":11,\"args\":{\"value\":5}}",
                // one token ended in bin 0 (0..100 ms): 10 tokens/s; the track falls back to 0 after it
                "{\"name\":\"tokens/s\",\"ph\":\"C\",\"ts\":0.0,\"pid\":99,\"tid\":0,\"args\":{\"value\":10.0}}",
                "{\"name\":\"tokens/s\",\"ph\":\"C\",\"ts\":100000.0,\"pid\":99,\"tid\":0,\"args\":{\"value\":0.0}}"),
                List.of(events.split(",(?=\\{\"name)")));
        assertEquals(List.of(), ChromeTraceValidator.problems(new ObjectMapper().readTree(json)));
        assertEquals(T0, new ObjectMapper().readTree(json).path("otherData").path("origin_monotonic_ns").asLong());
    }

    @Test
    void tokenRateBinsCountTokensPerHundredMillisecondsWithZerosBetween() {
        FlightRecorder recorder = new FlightRecorder(16, 10_000_000_000L);
        int prefill = recorder.label("prefill");
        recorder.record(Kind.TOKEN, 1, 0, 50_000_000L, prefill, 0, 8);      // bin 0: 8 tokens
        recorder.record(Kind.TOKEN, 1, 50_000_000L, 250_000_000L, prefill, 0, 1); // bin 2: 1 token
        var bins = ChromeTraceWriter.tokenBins(recorder.copyWindow(1_000_000_000L), 0);
        assertEquals(Map.of(0L, 8L, 1L, 0L, 2L, 1L, 3L, 0L), bins);
    }

    @Test
    void anEmptyWindowIsStillAValidTrace() throws Exception {
        String json = write(new FlightRecorder(4, 1_000), 10_000);
        assertEquals(List.of(), ChromeTraceValidator.problems(new ObjectMapper().readTree(json)));
        assertEquals(1, new ObjectMapper().readTree(json).path("traceEvents").size(), "only the process name");
    }
}
