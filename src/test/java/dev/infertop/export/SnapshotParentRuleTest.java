package dev.infertop.export;

import dev.infertop.io.Umask;
import dev.infertop.ffi.LibC;
import dev.infertop.io.FileAccess;
import dev.infertop.snapshot.SnapshotFixtures;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where a snapshot may be written, on directories made in a temporary tree with the owners and modes of the
 * cases: only where nobody but root can rearrange the parent, or in a root-owned sticky one (a fresh name,
 * never one that exists); a link anywhere in the parent's path is refused. Each refusal is the one line the
 * user reads, and nothing is created in a refused directory.
 */
class SnapshotParentRuleTest {
    private static final int NOBODY = 65534;

    @TempDir
    Path temp;

    @BeforeEach
    void needsRoot() {
        if (LibC.geteuid() != 0) {
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                Assertions.fail("cannot run in CI: needs root to give directories to another uid");
            }
            Assumptions.abort("needs root to give directories to another uid");
        }
    }

    private Path directory(String name, int uid, int mode) throws Exception {
        Path dir = Files.createDirectory(temp.resolve(name));
        Files.setAttribute(dir, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(dir, "unix:mode", mode, LinkOption.NOFOLLOW_LINKS);
        return dir;
    }

    private static String refusal(Path target, FileAccess access) {
        return assertThrows(SnapshotWriteException.class,
                () -> SnapshotDirectoryWriter.writeDirectory(target, SnapshotFixtures.content(), access),
                "written to " + target).getMessage();
    }

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> list = Files.list(dir)) {
            return list.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static final String HINT = "; choose a directory only root can write in with --snapshot-dir";

    @ParameterizedTest(name = "uid {0} mode {1}")
    @CsvSource({
            "65534, 0755, 'is owned by uid 65534, not by root: its owner could swap what infertop writes there'",
            "65534, 0700, 'is owned by uid 65534, not by root: its owner could swap what infertop writes there'",
            "65534, 1777, 'is owned by uid 65534, not by root: its owner could swap what infertop writes there'",
            "0, 0777, 'is writable by its group and others and not sticky (mode 0777): another user could swap what infertop writes there'",
            "0, 0775, 'is writable by its group and not sticky (mode 0775): another user could swap what infertop writes there'",
            "0, 0703, 'is writable by others and not sticky (mode 0703): another user could swap what infertop writes there'"})
    void aParentOthersCanRearrangeIsRefusedInOneLine(int uid, String mode, String why) throws Exception {
        Path parent = directory("parent", uid, Integer.parseInt(mode, 8));
        Path target = parent.resolve("snap");
        for (FileAccess access : FileAccess.values()) {
            assertEquals("cannot write snapshot " + target + ": " + parent + " " + why + HINT,
                    refusal(target, access));
        }
        assertEquals(List.of(), names(parent), "nothing made in a refused directory");
    }

    @Test
    void aMissingParentIsMadeButOneAnotherUserMadeIsRefused() throws Exception {
        Path sticky = directory("sticky", 0, 01777);
        Path other = Files.createDirectory(sticky.resolve("theirs"));
        Files.setAttribute(other, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
        assertEquals("cannot write snapshot " + other.resolve("x/snap") + ": " + other
                        + " is owned by uid 65534, not by root: its owner could swap what infertop writes there" + HINT,
                refusal(other.resolve("x/snap"), FileAccess.PRIVATE));
        assertEquals(List.of(), names(other));
        Path written = SnapshotDirectoryWriter.writeDirectory(sticky.resolve("ours/x/snap"), SnapshotFixtures.content(),
                FileAccess.SHARED).directory();
        assertEquals(sticky.resolve("ours/x/snap"), written);
        assertEquals("rwxr-xr-x", Umask.mode(sticky.resolve("ours")));
        assertEquals(0, (int) Files.getAttribute(sticky.resolve("ours"), "unix:uid", LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void aLinkAnywhereInTheParentsPathIsRefused() throws Exception {
        Path real = directory("real", 0, 0755);
        Path link = Files.createSymbolicLink(temp.resolve("link"), real);
        String message = refusal(link.resolve("snap"), FileAccess.PRIVATE);
        assertEquals("cannot write snapshot " + link.resolve("snap") + ": a symbolic link is in the way: infertop does"
                + " not write through links (it runs as root) (" + link + ")", message);
        message = refusal(link.resolve("sub/snap"), FileAccess.PRIVATE);
        assertTrue(message.startsWith("cannot write snapshot " + link.resolve("sub/snap") + ": a symbolic link is in"
                + " the way"), message);
        assertEquals(List.of(), names(real), "nothing written through the link");
    }

    @Test
    void inARootOwnedStickyDirectoryNoExistingNameIsReused() throws Exception {
        Path sticky = directory("tmp", 0, 01777);
        Path canary = Files.writeString(temp.resolve("canary"), "canary\n");
        Path planted = Files.createDirectory(sticky.resolve("snap"));
        Files.setAttribute(planted, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(planted, "unix:mode", 0777, LinkOption.NOFOLLOW_LINKS); // empty: rename(2) would replace it
        Files.createSymbolicLink(sticky.resolve("snap-2"), canary);
        Files.createSymbolicLink(sticky.resolve("snap-3"), temp.resolve("nowhere")); // dangling
        LibC.mkfifo(sticky.resolve("snap-4").toString(), 0666);
        Path written = SnapshotDirectoryWriter.writeDirectory(sticky.resolve("snap"), SnapshotFixtures.content(),
                FileAccess.PRIVATE).directory();
        assertEquals(sticky.resolve("snap-5"), written);
        assertEquals(List.of(), names(planted));
        assertEquals(NOBODY, (int) Files.getAttribute(planted, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        assertTrue(Files.isSymbolicLink(sticky.resolve("snap-2")));
        assertTrue(Files.isSymbolicLink(sticky.resolve("snap-3")));
        assertFalse(Files.exists(temp.resolve("nowhere"), LinkOption.NOFOLLOW_LINKS));
        assertEquals("canary\n", Files.readString(canary));
        assertEquals(List.of("snap", "snap-2", "snap-3", "snap-4", "snap-5"), names(sticky), "no temporary left");
    }

    @Test
    void directoriesRootOrItsOwnUidOwnsAndNobodyElseWritesAreWritten() throws Exception {
        for (String mode : List.of("0700", "0755", "0750", "1777", "1770")) {
            Path parent = directory("p" + mode, 0, Integer.parseInt(mode, 8));
            Path written = SnapshotDirectoryWriter.writeDirectory(parent.resolve("snap"), SnapshotFixtures.content(),
                    FileAccess.PRIVATE).directory();
            assertEquals(parent.resolve("snap"), written, mode);
            assertTrue(Files.isRegularFile(written.resolve("summary.json"), LinkOption.NOFOLLOW_LINKS), mode);
        }
    }

    @Test
    void aRelativePatternIsJudgedFromTheWorkingDirectoryAndNamedInFull() throws Exception {
        // The default pattern is relative (infertop-%p-%t): its parent is opened from the working directory.
        Path relative = Path.of("target", "parent-rule-" + ProcessHandle.current().pid());
        Files.createDirectories(relative);
        try {
            Files.setAttribute(relative, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
            Path shown = relative.toAbsolutePath();
            assertEquals("cannot write snapshot " + shown.resolve("snap") + ": " + shown + " is owned by uid 65534, not"
                    + " by root: its owner could swap what infertop writes there" + HINT,
                    refusal(relative.resolve("snap"), FileAccess.PRIVATE));
            Files.setAttribute(relative, "unix:uid", 0, LinkOption.NOFOLLOW_LINKS);
            assertEquals(shown.resolve("snap"), SnapshotDirectoryWriter.writeDirectory(relative.resolve("snap"),
                    SnapshotFixtures.content(), FileAccess.PRIVATE).directory());
        } finally {
            try (Stream<Path> walk = Files.walk(relative)) {
                for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }
}
