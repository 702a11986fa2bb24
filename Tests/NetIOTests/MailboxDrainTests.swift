import NetIO
import Testing

/// Draining into a kept array: messages in posting order, each once, and
/// the queue empty after.
@Suite struct MailboxDrainTests {
    @Test func drainIntoAKeptArrayTakesEveryMessageOnceInOrder() {
        let mailbox = Mailbox<Int>()
        var drained: [Int] = [99]
        for n in 1...3 { mailbox.post(n) }
        mailbox.drain(into: &drained)
        #expect(drained == [1, 2, 3])
        mailbox.post(4)
        mailbox.post(5)
        mailbox.drain(into: &drained)
        #expect(drained == [4, 5])
        mailbox.drain(into: &drained)
        #expect(drained.isEmpty)
        #expect(mailbox.drain().isEmpty)
        // The wake-up was cleared by the drains.
        #expect(!mailbox.wait(milliseconds: 0))
    }
}
