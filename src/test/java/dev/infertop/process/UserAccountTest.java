package dev.infertop.process;

import dev.infertop.ffi.UserDatabase;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Users looked up in this machine's user database (libc, NSS), by name and by uid; who owns a process. */
class UserAccountTest {
    @Test
    void rootByNameAndByUid() {
        UserAccount root = UserAccount.lookup("root").orElseThrow();
        assertEquals(0, root.uid());
        assertEquals(0, root.gid());
        assertTrue(root.groups().contains(0), root.groups().toString());
        assertEquals(Optional.of(root), UserAccount.lookup("0"));
    }

    @Test
    void nobodyHasItsGroupsAndHome() throws Exception {
        // getent is the reference: the same database through another client.
        String[] passwd = new String(new ProcessBuilder("getent", "passwd", "nobody").start().getInputStream()
                .readAllBytes()).strip().split(":");
        UserAccount nobody = UserAccount.lookup("nobody").orElseThrow();
        assertEquals(Integer.parseInt(passwd[2]), nobody.uid());
        assertEquals(Integer.parseInt(passwd[3]), nobody.gid());
        assertEquals(passwd[5], nobody.home());
        assertTrue(nobody.groups().contains(nobody.gid()));
        assertEquals("nobody (uid " + passwd[2] + ")", nobody.label());
    }

    @Test
    void anotherPrimaryGroupIsKept() {
        UserAccount nobody = UserAccount.byUid(UserAccount.lookup("nobody").orElseThrow().uid(), 0).orElseThrow();
        assertEquals(0, nobody.gid());
        assertTrue(nobody.groups().contains(0), nobody.groups().toString());
    }

    @Test
    void unknownUsersAreEmpty() {
        assertEquals(Optional.empty(), UserAccount.lookup("no-such-user-infertop"));
        assertEquals(Optional.empty(), UserAccount.lookup(""));
        assertEquals(Optional.empty(), UserAccount.lookup("a\0b"));
        assertEquals(Optional.empty(), UserAccount.lookup("3999999999"));
    }

    @Test
    void uidsAreDigitsThatFitUidT() {
        assertTrue(UserAccount.isUid("0"));
        assertTrue(UserAccount.isUid("4294967294"));
        assertFalse(UserAccount.isUid("4294967295")); // (uid_t) -1: "no uid"
        assertFalse(UserAccount.isUid("-1"));
        assertFalse(UserAccount.isUid("1a"));
        assertFalse(UserAccount.isUid(""));
    }

    @Test
    void theUidsLineOfProcStatus() {
        String status = "Name:\tllama-bench\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t42\nPid:\t42\n"
                + "Uid:\t65534\t65534\t65534\t65534\nGid:\t65534\t65534\t65534\t65534\n";
        assertEquals(Optional.of(new ProcessUids(65534, 65534)), ProcessUids.parseStatus(status));
        assertEquals(Optional.of(new ProcessUids(1000, 0)), ProcessUids.parseStatus("Uid:\t1000\t0\t0\t0\n"));
        assertEquals(Optional.empty(), ProcessUids.parseStatus("Name:\tx\n"));
        assertEquals(Optional.empty(), ProcessUids.parseStatus("Uid:\tx\ty\n"));
        assertEquals(Optional.empty(), ProcessUids.parseStatus("Uid:\t7\n"));
    }

    @Test
    void thisProcessIsItsOwnUsers() {
        ProcessUids self = ProcessUids.of((int) ProcessHandle.current().pid()).orElseThrow();
        assertTrue(self.ownedBy(UserDatabase.realUid()));
    }

    @Test
    void setprivRunsTheRestAsTheUser() {
        UserAccount alice = new UserAccount("alice", 1000, 1001, List.of(1001, 27), "/home/alice");
        assertEquals(List.of("/usr/bin/setpriv", "--reuid=1000", "--regid=1001", "--groups=1001,27", "--"),
                Setpriv.prefix(Path.of("/usr/bin/setpriv"), alice));
    }
}
