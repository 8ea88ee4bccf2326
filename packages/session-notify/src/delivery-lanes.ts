/** How many sends one drainer keeps in flight: in all, for one member, to one channel. */
export interface DeliveryLaneLimits {
  /** Sends in flight at once. Default 16. */
  inFlight: number;
  /** Sends in flight to one member's channels. Default 4. */
  perMember: number;
  /** Sends in flight to one channel (one destination). Default 2. */
  perChannel: number;
}

export const DEFAULT_DELIVERY_LANES: DeliveryLaneLimits = { inFlight: 16, perMember: 4, perChannel: 2 };

/** Lanes with sends in flight, as the claim takes them: parallel arrays of keys and rooms. */
export interface LaneRooms {
  members: { keys: string[]; rooms: number[] };
  channels: { keys: string[]; rooms: number[] };
  limits: DeliveryLaneLimits;
}

/** A delivery's lanes: its member's and its channel's, each keyed within its organization. */
export interface LaneKeys {
  organizationId: string;
  memberId: string;
  channelId: string;
}

/**
 * The sends one drainer has in flight, by member and by channel: a destination that never
 * answers holds at most its own lanes' slots until its sends time out, never another member's.
 * The claim is told each busy lane's room (`rooms`) and takes no more than that.
 */
export class DeliveryLanes {
  private sending = 0;
  private readonly members = new Map<string, number>();
  private readonly channels = new Map<string, number>();

  constructor(private readonly limits: DeliveryLaneLimits) {}

  /** Sends that may start now. */
  free(): number {
    return Math.max(0, this.limits.inFlight - this.sending);
  }

  /**
   * The room left in each lane that has sends in flight (a lane not listed has its whole limit):
   * the claim takes no more of a lane than its room, and nothing of a full one.
   */
  rooms(): LaneRooms {
    const room = (counts: Map<string, number>, limit: number) => ({ keys: [...counts.keys()], rooms: [...counts.values()].map((n) => Math.max(0, limit - n)) });
    return { members: room(this.members, this.limits.perMember), channels: room(this.channels, this.limits.perChannel), limits: this.limits };
  }

  /** Whether a lane is full: a send that ends may then let the claim take what it left. */
  anyFull(): boolean {
    return [...this.members.values()].some((n) => n >= this.limits.perMember) || [...this.channels.values()].some((n) => n >= this.limits.perChannel);
  }

  enter(keys: LaneKeys): void {
    this.sending += 1;
    bump(this.members, laneKey(keys.organizationId, keys.memberId), 1);
    bump(this.channels, laneKey(keys.organizationId, keys.channelId), 1);
  }

  leave(keys: LaneKeys): void {
    this.sending -= 1;
    bump(this.members, laneKey(keys.organizationId, keys.memberId), -1);
    bump(this.channels, laneKey(keys.organizationId, keys.channelId), -1);
  }
}

/** One lane's key: the organization and the member's or channel's id, apart by a unit separator. */
export const laneKey = (organizationId: string, id: string) => `${organizationId}\u001f${id}`;

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
