package dev.infertop.model;

import java.util.Locale;

/**
 * The roofline verdict for work that moved {@code bytes} and did {@code flops} in {@code wallNs}, against the
 * machine's two ceilings (infertop machine): memory-bound when it reads close to the memory ceiling and its
 * intensity is below the ridge point; compute-bound when it computes close to the compute ceiling; otherwise
 * neither, and the time went to something else (threads waiting at barriers, interference, a poor kernel).
 */
public final class Roofline {
    private Roofline() {}

    /** "Close to a ceiling": at least this share of it. */
    public static final double NEAR_CEILING = 0.5;

    public enum Bound {
        MEMORY("memory-bound"), COMPUTE("compute-bound"), NEITHER("neither: look at threads, barriers and interference");

        private final String text;

        Bound(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    /** The machine's ceilings in bytes and FLOPs per second. */
    public record Ceilings(double memoryBytesPerSecond, double flopsPerSecond) {
        public double ridgeFlopsPerByte() {
            return flopsPerSecond / memoryBytesPerSecond;
        }
    }

    /** One point: achieved rates, intensity, share of each ceiling, and the verdict. */
    public record Point(double bytesPerSecond, double flopsPerSecond, double flopsPerByte, double memoryShare,
                        double computeShare, Bound bound) {
        public String describe() {
            return String.format(Locale.ROOT, "%.1f GB/s (%.0f%% of memory), %.1f GFLOP/s (%.0f%% of compute), "
                            + "%.2f FLOP/byte: %s", bytesPerSecond / 1e9, 100 * memoryShare, flopsPerSecond / 1e9,
                    100 * computeShare, flopsPerByte, bound.text());
        }
    }

    public static Point point(long bytes, long flops, long wallNs, Ceilings ceilings) {
        double seconds = Math.max(wallNs, 1) / 1e9;
        double bytesPerSecond = bytes / seconds;
        double flopsPerSecond = flops / seconds;
        double intensity = bytes == 0 ? Double.POSITIVE_INFINITY : (double) flops / bytes;
        double memoryShare = bytesPerSecond / ceilings.memoryBytesPerSecond();
        double computeShare = flopsPerSecond / ceilings.flopsPerSecond();
        Bound bound;
        if (intensity < ceilings.ridgeFlopsPerByte() && memoryShare >= NEAR_CEILING) {
            bound = Bound.MEMORY;
        } else if (computeShare >= NEAR_CEILING) {
            bound = Bound.COMPUTE;
        } else {
            bound = Bound.NEITHER;
        }
        return new Point(bytesPerSecond, flopsPerSecond, intensity, memoryShare, computeShare, bound);
    }

    /** The fastest decode the memory ceiling allows when each token reads {@code weightBytesPerToken}. */
    public static double decodeBoundTokensPerSecond(long weightBytesPerToken, Ceilings ceilings) {
        return weightBytesPerToken <= 0 ? Double.POSITIVE_INFINITY
                : ceilings.memoryBytesPerSecond() / weightBytesPerToken;
    }
}
