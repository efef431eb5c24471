/**
 * whisper.cpp's own model file (the ggml format before GGUF that whisper.cpp still reads: magic, hyperparameters,
 * mel filters, vocabulary, named tensors) for a synthetic speech model, and the 16 kHz WAV it transcribes: a
 * second GGML runtime to run under infertop with no downloads.
 * <p>
 * May import: {@code io}, {@code workload}. The writer's PRNG is the workload's own, so that its files stay
 * byte-identical across JDKs as the GGUF models do.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.workload.whisper;
