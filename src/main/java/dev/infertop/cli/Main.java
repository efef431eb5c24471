package dev.infertop.cli;

/** Entry point; replaced by the picocli command tree. */
public final class Main {
    public static void main(String[] args) {
        System.out.println("infertop");
    }
}
