import MediaRouter
import RoomProtocol
import Rooms
import Testing
import WorkerRelay

@Suite struct WorkerCommandTests {
    @Test func relayCommandsNameTheirWorker() {
        let a = WorkerCommand.addRelaySink(room: "r", trackID: "TR_1", relay: RelayTrackID(1), to: 2)
        #expect(a != WorkerCommand.addRelaySink(room: "r", trackID: "TR_1", relay: RelayTrackID(1), to: 3))
    }
}
